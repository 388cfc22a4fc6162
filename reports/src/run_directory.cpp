#include "rocehil/reports/run_directory.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <ctime>
#include <filesystem>

#include "rocehil/common/error.hpp"
#include "rocehil/common/file_safe_name.hpp"

namespace rocehil::reports {

std::string iso_utc(std::int64_t unix_s) {
  const std::time_t t = static_cast<std::time_t>(unix_s);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char text[32] = {};
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return text;
}

std::string make_run_id(std::int64_t unix_s, std::string_view suite_name) {
  const std::time_t t = static_cast<std::time_t>(unix_s);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char stamp[32] = {};
  std::strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", &tm);
  std::string name(suite_name.substr(0, 64));
  if (name.empty() || name[0] == '.') name.insert(0, "suite");
  return file_safe_name(std::string(stamp) + "-" + name);
}

RunDirectory RunDirectory::create(const std::string& reports_dir, const std::string& run_id) {
  std::error_code ec;
  std::filesystem::create_directories(reports_dir, ec);
  if (ec)
    throw Error(ExitCode::bad_input,
                fmt::format("cannot make the reports directory {}: {} (give --reports DIR)",
                            reports_dir, ec.message()));
  for (int n = 1; n < 1000; ++n) {
    const std::string id = n == 1 ? run_id : fmt::format("{}-{}", run_id, n);
    const std::string path = (std::filesystem::path(reports_dir) / id).string();
    if (::mkdir(path.c_str(), 0755) == 0) return RunDirectory(path, id);
    if (errno != EEXIST) throw system_error(fmt::format("cannot make {}", path), errno);
  }
  throw Error(ExitCode::bad_input,
              fmt::format("{}: 999 runs named {} already; clear old runs", reports_dir, run_id));
}

std::string RunDirectory::file(std::string_view name) const {
  return (std::filesystem::path(path_) / name).string();
}

void RunDirectory::write(std::string_view name, std::string_view content) const {
  write_file_whole(file(name), content);
}

}  // namespace rocehil::reports
