#pragma once

// PFC and the trust mode, set through the tools the preflight snapshot reads them with:
// mlnx_qos (MLNX_OFED: both) when it is on the host, else dcb (iproute2: PFC only). Their output
// is read by settings/qos_output.hpp, held to the preflight's own parser by a test, so a setting
// reads back as a run's snapshot shows it.

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "rocehil/settings/target.hpp"

namespace rocehil::agent {

struct ToolRun {
  int exit_code = 0;
  std::string out, err;
};

// The words that set `setting` ("pfc" or "trust", canonical value) with `tool` ("mlnx_qos" or
// "dcb") on `netdev`, program first; empty when the tool cannot set it.
std::vector<std::string> qos_set_words(std::string_view tool, std::string_view setting,
                                       const std::string& netdev, const std::string& canonical);
// The words that show them.
std::vector<std::string> qos_show_words(std::string_view tool, const std::string& netdev);
// `setting`'s canonical value in the tool's output (one device's); nullopt when it does not say.
std::optional<std::string> qos_value(std::string_view tool, std::string_view setting,
                                     std::string_view output);

class QosTools final : public settings::Target {
 public:
  using Run = std::function<ToolRun(const std::vector<std::string>&)>;
  using Has = std::function<bool(std::string_view program)>;
  // Real tools by default: found on PATH, run without a shell.
  explicit QosTools(std::string netdev, Run run = {}, Has has = {});

  bool has(const settings::Setting& s, std::string* why_not = nullptr) const override;
  std::optional<std::string> read(const settings::Setting& s) const override;
  void write(const settings::Setting& s, const std::string& canonical) const override;
  std::string where(const settings::Setting& s) const override;
  const std::string& netdev() const noexcept override { return netdev_; }

 private:
  std::string tool_for(const settings::Setting& s) const;  // "" when none can
  std::string netdev_;
  Run run_;
  Has has_;
};

// A host's NIC as a whole: its files (sysfs, debugfs) for what has a file, the QoS tools for PFC
// and trust.
class HostNic final : public settings::Target {
 public:
  HostNic(const std::string& root, std::string netdev);
  bool has(const settings::Setting& s, std::string* why_not = nullptr) const override;
  std::optional<std::string> read(const settings::Setting& s) const override;
  void write(const settings::Setting& s, const std::string& canonical) const override;
  std::string where(const settings::Setting& s) const override;
  const std::string& netdev() const noexcept override { return netdev_; }

 private:
  const settings::Target& part(const settings::Setting& s) const;
  std::string netdev_;
  std::unique_ptr<settings::Target> files_, tools_;
};

}  // namespace rocehil::agent
