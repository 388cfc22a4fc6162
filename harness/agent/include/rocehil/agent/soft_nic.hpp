#pragma once

// The soft provider's settings as a settings::Target: its per-address files (laid out as a
// ConnectX host's sysfs), and only the names the provider takes. Any other name is refused
// saying that the soft provider does not take it, not where a ConnectX would keep it.
//
// Besides its DCQCN integers it takes the host's QoS: `pfc` (the priorities whose PFC pauses its
// QPs) and `trust` (which field picks a packet's priority). A ConnectX keeps those in firmware
// and mlnx_qos reads them; the soft provider keeps each in a file of its own,
// ROOT/sys/class/net/DEV/rocehil_qos/NAME, in the setting's canonical text.

#include <cstdint>
#include <string>
#include <string_view>

#include "rocehil/settings/nic_files.hpp"
#include "rocehil/settings/target.hpp"

namespace rocehil::agent {

// What the soft provider's QoS settings hold where no file was ever written: PFC on every
// priority and trust dscp, a host set up for RoCE (a ConnectX's firmware ships none and pcp,
// the catalogue's defaults).
inline constexpr std::string_view soft_pfc_default = "0,1,2,3,4,5,6,7";
inline constexpr std::string_view soft_trust_default = "dscp";

// The QoS a soft provider starts with (ProviderOptions::trust_pcp and pfc_priorities).
struct SoftQos {
  bool trust_pcp = false;
  std::uint8_t pfc_priorities = 0xff;  // bit P: priority P
};

// A canonical list of priorities ("3,4", "none") as a bitmask, bit P for priority P.
std::uint8_t priority_mask(std::string_view canonical);

class SoftNic final : public settings::Target {
 public:
  SoftNic(const std::string& root, const std::string& netdev) : root_(root), files_(root, netdev) {}

  bool has(const settings::Setting& s, std::string* why_not = nullptr) const override;
  std::optional<std::string> read(const settings::Setting& s) const override;
  void write(const settings::Setting& s, const std::string& canonical) const override;
  std::string where(const settings::Setting& s) const override;
  const std::string& netdev() const noexcept override { return files_.netdev(); }

  // Writes the provider's own default into each of its DCQCN files that is missing, laid out
  // as a ConnectX host's sysfs, so that one NicFiles reads, writes and restores both. Throws
  // rocehil::Error (infrastructure) naming a file it cannot write.
  void make_files() const;

  // Its `pfc` and `trust`, as the provider takes them. Throws rocehil::Error (infrastructure)
  // naming a file that holds what the setting does not take.
  SoftQos qos() const;

 private:
  std::string qos_file(std::string_view name) const;
  std::string root_;
  settings::NicFiles files_;
};

}  // namespace rocehil::agent
