#include "rocehil/run/calibrate.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cerrno>
#include <cmath>
#include <filesystem>
#include <fstream>

#include "basics/json_member.hpp"
#include "rocehil/common/error.hpp"
#include "rocehil/common/whole_file.hpp"
#include "rocehil/inventory/load.hpp"
#include "rocehil/run/suite_run.hpp"

namespace rocehil::run {

namespace {

using nlohmann::json;

// ratio within 1 +- tolerance, as two thresholds a person can read in the report.
std::string agreement(double tolerance) {
  return fmt::format("      - calibration_ratio >= {:g}\n      - calibration_ratio <= {:g}\n",
                     1 - tolerance, 1 + tolerance);
}

std::optional<double> number_at(const json& parent, const char* key) {
  const json& v = json_member(parent, key);
  return v.is_number() ? std::optional(v.get<double>()) : std::nullopt;
}

std::vector<double> numbers(const json& list) {
  std::vector<double> out;
  if (list.is_array())
    for (const auto& v : list)
      if (v.is_number()) out.push_back(v.get<double>());
  return out;
}

// Why a case did not pass: its error, or the thresholds it failed.
std::string detail_of(const json& attempt) {
  const json& error = json_member(attempt, "error");
  if (error.is_object() && !error.empty())
    return fmt::format("{}: {}: {}", error.value("host", ""), error.value("phase", ""),
                       error.value("message", ""));
  std::vector<std::string> failed;
  for (const auto& t : json_member(json_member(attempt, "grade"), "thresholds"))
    if (t.value("verdict", "pass") != "pass") failed.push_back(t.value("detail", ""));
  return fmt::format("{}", fmt::join(failed, "; "));
}

}  // namespace

std::string calibration_suite(const CalibrateOptions& o) {
  if (o.hosts.size() != 2 || o.hosts[0] == o.hosts[1])
    throw input_error(
        fmt::format("--hosts '{}': give two different hosts, as A,B", fmt::join(o.hosts, ",")));
  if (!o.bw && !o.lat) throw input_error("nothing to calibrate: give bw, lat or both");
  if (o.bw && o.sizes.empty()) throw input_error("--sizes: give at least one size");
  for (const double t : {o.bw_tolerance, o.lat_tolerance})
    if (!(t > 0 && t < 1))
      throw input_error(
          fmt::format("a tolerance of {:g} is not a fraction between 0 and 1 "
                      "(0.05 is 5%)",
                      t));
  std::string text = fmt::format(
      "# rocehil calibrate: rocehil's engine against perftest on {0} and {1}, the same NICs,\n"
      "# sizes and QPs, {2} rounds of each engine interleaved. `rocehil run` takes this file as "
      "it is.\n"
      "schema_version: 1\n"
      "name: calibration\n"
      "description: rocehil against perftest on {0} -> {1}\n"
      "defaults:\n"
      "  hosts: '{0},{1}'\n"
      "  rounds: {2}\n"
      "tests:\n",
      o.hosts[0], o.hosts[1], o.rounds);
  if (o.bw)
    text += fmt::format(
        "  - name: calibrate_bw\n"
        "    workload: calibrate_bw\n"
        "    opcode: {}\n"
        "    size: [{}]\n"
        "    qps: {}\n"
        "    duration_s: {:g}\n"
        "    thresholds:\n{}",
        o.opcode, fmt::join(o.sizes, ", "), o.qps, std::max(1.0, std::ceil(o.seconds)),
        agreement(o.bw_tolerance));
  if (o.lat)
    text += fmt::format(
        "  - name: calibrate_lat\n"
        "    workload: calibrate_lat\n"
        "    size: {}\n"
        "    iterations: {}\n"
        "    thresholds:\n{}",
        o.lat_size, o.lat_iterations, agreement(o.lat_tolerance));
  return text;
}

std::vector<CalibrationRow> calibration_rows(const json& run) {
  std::vector<CalibrationRow> rows;
  for (const auto& c : json_member(run, "cases")) {
    const std::string workload = c.value("workload", "");
    if (workload != "calibrate_bw" && workload != "calibrate_lat") continue;
    CalibrationRow row;
    row.workload = workload == "calibrate_bw" ? "bw" : "lat";
    row.unit = row.workload == "bw" ? "Gbit/s" : "us";
    row.size = static_cast<std::uint64_t>(number_at(json_member(c, "names"), "size").value_or(0));
    row.outcome = c.value("outcome", "");
    const json& attempts = json_member(c, "attempts");
    if (attempts.is_array() && !attempts.empty()) {
      const json& last = attempts.back();
      const json& calibration =
          json_member(json_member(json_member(last, "raw"), "traffic"), "calibration");
      row.rocehil = numbers(json_member(calibration, "rocehil"));
      row.perftest = numbers(json_member(calibration, "perftest"));
      const json& metrics = json_member(last, "metrics");
      row.rocehil_median = number_at(metrics, "calibration_rocehil");
      row.perftest_median = number_at(metrics, "calibration_perftest");
      row.ratio = number_at(metrics, "calibration_ratio");
      row.spread = number_at(metrics, "calibration_spread");
      if (row.outcome != "pass") row.detail = detail_of(last);
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

CalibrateOutcome run_calibrate(const CalibrateOptions& o, const std::atomic<bool>& interrupt,
                               RunEvents& events) {
  const inventory::Inventory inv = inventory::load_inventory(o.inventory_file);
  for (const auto& name : o.hosts)
    if (inv.find_host(name) == nullptr)
      throw input_error(fmt::format("--hosts: {} has no host '{}' (rocehil inventory show {})",
                                    o.inventory_file, name, o.inventory_file));
  const std::string text = calibration_suite(o);
  CalibrateOutcome out;
  std::filesystem::create_directories(o.reports_dir);
  const auto suite_path = std::filesystem::path(o.reports_dir) /
                          fmt::format("calibration-{}-{}.yaml", o.hosts[0], o.hosts[1]);
  write_file_whole(suite_path.string(), text);
  out.suite_file = suite_path.string();

  SuiteRunOptions run;
  run.suite_file = out.suite_file;
  run.inventory_file = o.inventory_file;
  run.reports_dir = o.reports_dir;
  run.history_file = o.history_file;
  run.deploy = o.deploy;
  run.deploy_packages = o.deploy_packages;
  run.timeout = o.timeout;
  run.command_line = o.command_line;
  run.started_as = reports::RunKind::calibrate;
  out.exit_code = run_suite(run, interrupt, events, &out.run_id);
  if (out.run_id.empty()) return out;
  const auto record_path = std::filesystem::path(o.reports_dir) / out.run_id / "run.json";
  std::ifstream in(record_path);
  if (!in) throw system_error(fmt::format("cannot read {}", record_path.string()), errno);
  out.rows = calibration_rows(json::parse(in));
  return out;
}

}  // namespace rocehil::run
