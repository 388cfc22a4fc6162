#pragma once

// The soft provider's settings as a settings::Target: its per-address files (laid out as a
// ConnectX host's sysfs), and only the names the provider takes. Any other name is refused
// saying that the soft provider does not take it, not where a ConnectX would keep it.

#include <string>

#include "rocehil/settings/nic_files.hpp"
#include "rocehil/settings/target.hpp"

namespace rocehil::agent {

class SoftNic final : public settings::Target {
 public:
  SoftNic(const std::string& root, const std::string& netdev) : files_(root, netdev) {}

  bool has(const settings::Setting& s, std::string* why_not = nullptr) const override;
  std::optional<std::string> read(const settings::Setting& s) const override;
  void write(const settings::Setting& s, const std::string& canonical) const override;
  std::string where(const settings::Setting& s) const override;
  const std::string& netdev() const noexcept override { return files_.netdev(); }

 private:
  settings::NicFiles files_;
};

}  // namespace rocehil::agent
