#pragma once

// A NIC's settings that live in files: MLNX_OFED's sysfs /sys/class/net/DEV/ecn/ (and the
// netdev's mtu), or the upstream mlx5_ib driver's debugfs /sys/kernel/debug/mlx5/PCI/cc_params/.
// Everything is found under a root directory: "/" on a host; a directory laid out like a host's
// in tests; the soft provider's own directory, where it keeps the same files for itself.

#include <optional>
#include <string>
#include <string_view>

#include "rocehil/settings/catalogue.hpp"
#include "rocehil/settings/target.hpp"

namespace rocehil::settings {

// The soft provider's NICs keep their files here: DIR/ADDRESS is one's root.
inline constexpr std::string_view soft_nic_dir = "/run/rocehil/soft";

class NicFiles final : public Target {
 public:
  // `netdev` under `root` ("/" or a directory ending without '/').
  NicFiles(std::string root, std::string netdev);

  // Whether `s` is a file on this NIC (sysfs first, then debugfs); if not, `why_not` says so for
  // an error message ("eth1 has no ecn/roce_rp/ in sysfs and no mlx5 cc_params in debugfs").
  bool has(const Setting& s, std::string* why_not = nullptr) const override;

  // The value in force, canonical (canonical_value()); nullopt where has() is false. Throws
  // rocehil::Error (infrastructure) when a file that is there cannot be read or holds what the
  // setting does not take, naming the file.
  std::optional<std::string> read(const Setting& s) const override;

  // Writes `canonical` (canonical_value() of `s`). Throws rocehil::Error (infrastructure) naming
  // the file and the driver's errno when the write is refused; a setting has() is false for is
  // bad input.
  void write(const Setting& s, const std::string& canonical) const override;

  // The file or directory `s` lives in on this NIC, for messages and journals; empty if none.
  std::string where(const Setting& s) const override;

  const std::string& netdev() const noexcept override { return netdev_; }

 private:
  std::string sysfs_path(const Setting& s) const;    // "" when the setting has no sysfs file
  std::string debugfs_path(const Setting& s) const;  // "" when none (or no PCI address)
  std::string root_, netdev_;
};

}  // namespace rocehil::settings
