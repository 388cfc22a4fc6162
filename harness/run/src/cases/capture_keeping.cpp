#include "cases/capture_keeping.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <system_error>
#include <vector>

#include "rocehil/common/file_safe_name.hpp"
#include "rocehil/common/units.hpp"
#include "rocehil/remote/run_command.hpp"
#include "rocehil/suites/grade.hpp"

namespace rocehil::run {

namespace {

// A name part that is safe as a file name and on a remote command line alike, '=' kept (case ids
// read "allreduce_qps=8"), and a '_' put before a first '.' or '-' rather than in its place (the
// case id "../up" is kept whole: "_.._up").
std::string file_safe(std::string_view s) {
  if (s.empty() || s.front() == '.' || s.front() == '-')
    return file_safe_name("_" + std::string(s), '_', "=");
  return file_safe_name(s, '_', "=");
}

std::vector<std::string> strings_of(const nlohmann::json& j) {
  std::vector<std::string> out;
  if (j.is_array())
    for (const auto& v : j)
      if (v.is_string()) out.push_back(v.get<std::string>());
  return out;
}

std::string string_of(const nlohmann::json& j, const char* key) {
  const auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

remote::CommandResult on_host(const inventory::Host& host, const std::vector<std::string>& argv,
                              const remote::SshMultiplex* multiplex, remote::RunOptions options) {
  return remote::run_command(remote::host_command(host, argv, multiplex).argv, options);
}

// Brings `files` from the host into `dir` (relative to the run directory); on any failure the
// files brought so far are removed and the reason returned.
std::string fetch(const inventory::Host& host, const remote::SshMultiplex* multiplex,
                  const std::vector<std::string>& files, const std::string& run_dir,
                  const std::string& stem, std::chrono::seconds timeout, reports::KeptCapture& k) {
  std::error_code ec;
  for (std::size_t i = 0; i < files.size(); ++i) {
    const std::string relative =
        files.size() == 1 ? stem + ".pcapng" : fmt::format("{}-{}.pcapng", stem, i + 1);
    const std::filesystem::path local = std::filesystem::path(run_dir) / relative;
    std::filesystem::create_directories(local.parent_path(), ec);
    remote::RunOptions options;
    options.timeout =
        std::max(std::chrono::milliseconds(timeout) * 4, std::chrono::milliseconds(60000));
    options.stdout_file = local.string();
    const remote::CommandResult r = on_host(host, {"cat", "--", files[i]}, multiplex, options);
    if (!r.succeeded()) {
      for (const std::string& f : k.files)
        std::filesystem::remove(std::filesystem::path(run_dir) / f, ec);
      std::filesystem::remove(local, ec);
      k.files.clear();
      k.bytes = 0;
      return fmt::format("could not copy {} from {}: {}", files[i], host.name, r.reason());
    }
    k.files.push_back(relative);
    k.bytes += std::filesystem::file_size(local, ec);
  }
  return {};
}

}  // namespace

CaptureKeeping capture_keeping(const suites::CaptureDefaults& suite, const std::string& mode,
                               const std::string& run_id, const std::string& run_dir) {
  CaptureKeeping k;
  k.mode = mode.empty() ? suite.keep : mode;
  k.mb_per_capture = suite.keep_mb;
  k.total_limit_bytes = std::uint64_t{suite.keep_total_mb} << 20;
  k.run_id = run_id;
  k.run_dir = run_dir;
  return k;
}

std::string capture_write_path(const CaptureKeeping& keeping, std::size_t case_index,
                               std::size_t attempt_index, std::string_view point) {
  return fmt::format("/var/tmp/rocehil-{}-c{}-a{}-{}.pcapng", file_safe(keeping.run_id),
                     case_index + 1, attempt_index + 1, file_safe(point));
}

std::string kept_capture_dir(std::string_view case_id) {
  return "captures/" + file_safe(case_id);
}

bool keeps_attempt(const CaptureKeeping& keeping, const reports::Attempt& attempt,
                   bool expect_fail) {
  if (keeping.mode == "always") return true;
  if (keeping.mode != "failed") return false;
  if (attempt.error) return true;
  if (!attempt.grade) return false;
  const suites::Outcome o = suites::outcome_of(attempt.grade->verdict, expect_fail);
  return o != suites::Outcome::pass && o != suites::Outcome::expected_fail;
}

void settle_captures(CaptureKeeping& keeping, const inventory::Inventory& inventory,
                     const remote::SshMultiplex* multiplex, const reports::CaseRecord& c,
                     std::size_t attempt_index, reports::Attempt& attempt,
                     std::chrono::seconds timeout) {
  const auto captures = attempt.raw.find("captures");
  if (captures == attempt.raw.end() || !captures->is_array()) return;
  const bool keep = keeps_attempt(keeping, attempt, c.expect_fail);
  for (const auto& entry : *captures) {
    const std::vector<std::string> files =
        strings_of(entry.value("written_on_host", nlohmann::json()));
    const std::string write_error = string_of(entry, "write_error");
    reports::KeptCapture k;
    k.point = string_of(entry, "point");
    k.host = string_of(entry, "host");
    const inventory::Host* host = inventory.find_host(k.host);
    if (keep && !write_error.empty())
      k.not_kept = "the capture host could not write it: " + write_error;
    else if (keep && files.empty())
      k.not_kept = "the capture host wrote no file";
    if (host == nullptr || files.empty()) {
      if (!k.not_kept.empty()) attempt.captures_kept.push_back(std::move(k));
      continue;
    }
    if (keep) {
      const std::string stem =
          fmt::format("{}/a{}-{}", kept_capture_dir(c.id), attempt_index + 1, file_safe(k.point));
      k.not_kept = fetch(*host, multiplex, files, keeping.run_dir, stem, timeout, k);
      if (k.not_kept.empty() && keeping.kept_bytes + k.bytes > keeping.total_limit_bytes) {
        std::error_code ec;
        for (const std::string& f : k.files)
          std::filesystem::remove(std::filesystem::path(keeping.run_dir) / f, ec);
        k.not_kept = fmt::format(
            "the run has kept {} of captures and these {} would pass capture.keep_total_mb ({} MB)",
            format_bytes(static_cast<double>(keeping.kept_bytes)),
            format_bytes(static_cast<double>(k.bytes)), keeping.total_limit_bytes >> 20);
        k.files.clear();
        k.bytes = 0;
      }
      keeping.kept_bytes += k.bytes;
      attempt.captures_kept.push_back(std::move(k));
    }
    // Nothing stays on the capture host; a failure to delete is the host's to clean, not the
    // run's (the file names carry the run id).
    std::vector<std::string> rm{"rm", "-f", "--"};
    rm.insert(rm.end(), files.begin(), files.end());
    remote::RunOptions options;
    options.timeout = timeout;
    on_host(*host, rm, multiplex, options);
  }
}

}  // namespace rocehil::run
