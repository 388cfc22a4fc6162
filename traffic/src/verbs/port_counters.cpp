#include "verbs/port_counters.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <system_error>

#include "rocehil/common/error.hpp"

namespace rocehil::traffic::verbs {

namespace {

// Adds every counter file of `directory`; false when the directory does not exist.
bool read_directory(const std::filesystem::path& directory,
                    std::map<std::string, std::uint64_t>& counters) {
  std::error_code error;
  std::filesystem::directory_iterator it(directory, error);
  if (error) return false;
  for (const std::filesystem::directory_entry& entry : it) {
    if (!entry.is_regular_file(error)) continue;
    std::ifstream file(entry.path());
    std::string text;
    if (!file || !std::getline(file, text)) continue;
    std::uint64_t value = 0;
    const auto [end, parse_error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (parse_error != std::errc{} || end == text.data()) continue;
    counters[entry.path().filename().string()] = value;
  }
  return true;
}

}  // namespace

std::map<std::string, std::uint64_t> read_port_counters(std::string_view device, std::uint8_t port,
                                                        std::string_view sysfs_root) {
  const std::filesystem::path port_dir =
      std::filesystem::path(sysfs_root) / device / "ports" / std::to_string(port);
  std::map<std::string, std::uint64_t> counters;
  const bool has_ibta = read_directory(port_dir / "counters", counters);
  const bool has_hw = read_directory(port_dir / "hw_counters", counters);
  if (!has_ibta && !has_hw) {
    throw Error(
        ExitCode::infrastructure,
        fmt::format("no counters for RDMA device '{}' port {}: {} has neither counters/ nor "
                    "hw_counters/ (check the name with 'ibv_devices')",
                    device, port, port_dir.string()),
        ENOENT);
  }
  return counters;
}

}  // namespace rocehil::traffic::verbs
