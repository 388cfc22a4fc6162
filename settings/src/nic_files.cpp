#include "rocehil/settings/nic_files.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <system_error>

#include "rocehil/common/error.hpp"

namespace rocehil::settings {

namespace fs = std::filesystem;

namespace {

bool is_file(const std::string& path) {
  std::error_code ec;
  return !path.empty() && fs::is_regular_file(path, ec);
}

// The first line of a sysfs or debugfs file, without its newline and blanks.
std::string first_line(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  if (!in || !std::getline(in, line))
    throw system_error(fmt::format("cannot read {}", path), errno != 0 ? errno : EIO);
  while (!line.empty() && (line.back() == ' ' || line.back() == '\r' || line.back() == '\t'))
    line.pop_back();
  return line;
}

// One write(2) of `text`, as `echo VALUE > FILE` does: a sysfs store takes the value in one call
// and answers a value it refuses with an errno (EINVAL, EPERM, ...).
void write_file(const std::string& path, const std::string& text) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) throw system_error(fmt::format("cannot open {} to write it", path), errno);
  const std::string line = text + "\n";
  const ssize_t n = ::write(fd, line.data(), line.size());
  const int write_errno = errno;
  ::close(fd);
  if (n < 0)
    throw system_error(fmt::format("the driver refused {} for {}", text, path), write_errno);
  if (static_cast<std::size_t>(n) != line.size())
    throw system_error(fmt::format("{} took {} of {} bytes of {}", path, n, line.size(), text),
                       EIO);
}

std::string enable_file(const std::string& dir, int priority) {
  return fmt::format("{}/{}", dir, priority);
}

}  // namespace

NicFiles::NicFiles(std::string root, std::string netdev)
    : root_(std::move(root)), netdev_(std::move(netdev)) {
  while (root_.size() > 1 && root_.back() == '/') root_.pop_back();
  if (root_ == "/") root_.clear();
}

std::string NicFiles::sysfs_path(const Setting& s) const {
  if (s.scope != Scope::nic || s.sysfs.empty()) return {};
  return fmt::format("{}/sys/class/net/{}/{}", root_, netdev_, s.sysfs);
}

std::string NicFiles::debugfs_path(const Setting& s) const {
  if (s.scope != Scope::nic || s.debugfs.empty()) return {};
  // The PCI address the netdev's `device` link points at: /sys/class/net/DEV/device ->
  // ../../../0000:3b:00.0.
  std::error_code ec;
  const fs::path device =
      fs::read_symlink(fmt::format("{}/sys/class/net/{}/device", root_, netdev_), ec);
  if (ec || device.filename().empty()) return {};
  return fmt::format("{}/sys/kernel/debug/mlx5/{}/cc_params/{}", root_, device.filename().string(),
                     s.debugfs);
}

bool NicFiles::has(const Setting& s, std::string* why_not) const {
  const std::string sysfs = sysfs_path(s);
  if (s.kind == ValueKind::priorities ? is_file(enable_file(sysfs, 0)) : is_file(sysfs))
    return true;
  if (is_file(debugfs_path(s))) return true;
  if (why_not != nullptr) {
    if (s.scope != Scope::nic) {
      *why_not = fmt::format("{} belongs to the fabric's switches, not to a NIC", s.name);
    } else if (s.sysfs.empty() && s.debugfs.empty()) {
      *why_not = fmt::format("{} is set with {}, not through a file", s.name, s.tool);
    } else if (s.debugfs.empty()) {
      *why_not =
          fmt::format("{} has no {} in sysfs (MLNX_OFED's mlx5 driver has it)", netdev_, s.sysfs);
    } else {
      *why_not = fmt::format(
          "{} has neither {} in sysfs (MLNX_OFED's mlx5 driver) nor cc_params/{} in debugfs "
          "(upstream mlx5_ib, debugfs mounted, read as root)",
          netdev_, s.sysfs, s.debugfs);
    }
  }
  return false;
}

std::string NicFiles::where(const Setting& s) const {
  const std::string sysfs = sysfs_path(s);
  if (s.kind == ValueKind::priorities ? is_file(enable_file(sysfs, 0)) : is_file(sysfs))
    return sysfs;
  const std::string debugfs = debugfs_path(s);
  return is_file(debugfs) ? debugfs : std::string();
}

std::optional<std::string> NicFiles::read(const Setting& s) const {
  if (!has(s)) return std::nullopt;
  const std::string path = where(s);
  if (s.kind == ValueKind::priorities) {
    std::string set;
    for (int p = 0; p < 8; ++p) {
      const std::string file = enable_file(path, p);
      const std::string v = first_line(file);
      if (v != "0" && v != "1")
        throw Error(ExitCode::infrastructure,
                    fmt::format("{} holds '{}', not 0 or 1: cannot tell whether {} is on", file, v,
                                s.name));
      if (v == "1") {
        if (!set.empty()) set += ',';
        set += static_cast<char>('0' + p);
      }
    }
    return set.empty() ? "none" : set;
  }
  const std::string v = first_line(path);
  try {
    return canonical_value(s, v);
  } catch (const Error&) {
    throw Error(ExitCode::infrastructure, fmt::format("{} holds '{}', which {} does not take ({})",
                                                      path, v, s.name, valid_values(s)));
  }
}

void NicFiles::write(const Setting& s, const std::string& canonical) const {
  std::string why_not;
  if (!has(s, &why_not)) throw input_error(why_not);
  const std::string path = where(s);
  if (s.kind == ValueKind::priorities) {
    const std::string set = canonical_value(s, canonical);
    for (int p = 0; p < 8; ++p) {
      const bool on = set != "none" && set.find(static_cast<char>('0' + p)) != std::string::npos;
      write_file(enable_file(path, p), on ? "1" : "0");
    }
    return;
  }
  write_file(path, canonical);
}

}  // namespace rocehil::settings
