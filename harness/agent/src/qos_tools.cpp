#include "qos_tools.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <array>
#include <chrono>
#include <csignal>

#include "rocehil/common/error.hpp"
#include "rocehil/perftest/child_process.hpp"
#include "rocehil/settings/nic_files.hpp"
#include "rocehil/settings/qos_output.hpp"

namespace rocehil::agent {

namespace {

// "3,4" as the eight 0/1 of mlnx_qos --pfc, or the 0:off 1:off ... of dcb's prio-pfc.
std::array<bool, 8> priorities_of(const std::string& canonical) {
  std::array<bool, 8> on{};
  if (canonical == "none") return on;
  for (std::size_t i = 0; i < canonical.size(); ++i)
    if (canonical[i] >= '0' && canonical[i] <= '7') on[canonical[i] - '0'] = true;
  return on;
}

ToolRun run_for_real(const std::vector<std::string>& words) {
  perftest::ChildProcess child(words);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (!child.poll(std::chrono::milliseconds(200)))
    if (std::chrono::steady_clock::now() > deadline) {
      child.signal(SIGKILL);
      throw Error(ExitCode::infrastructure,
                  fmt::format("{} did not end within 30 s", fmt::join(words, " ")));
    }
  return {child.exit_code(), child.out(), child.err()};
}

}  // namespace

std::vector<std::string> qos_set_words(std::string_view tool, std::string_view setting,
                                       const std::string& netdev, const std::string& canonical) {
  if (tool == "mlnx_qos" && setting == "pfc") {
    const auto on = priorities_of(canonical);
    std::string list;
    for (int p = 0; p < 8; ++p) list += fmt::format("{}{}", p ? "," : "", on[p] ? 1 : 0);
    return {"mlnx_qos", "-i", netdev, "--pfc", list};
  }
  if (tool == "mlnx_qos" && setting == "trust")
    return {"mlnx_qos", "-i", netdev, "--trust", canonical};
  if (tool == "dcb" && setting == "pfc") {
    std::vector<std::string> words = {"dcb", "pfc", "set", "dev", netdev, "prio-pfc"};
    const auto on = priorities_of(canonical);
    for (int p = 0; p < 8; ++p) words.push_back(fmt::format("{}:{}", p, on[p] ? "on" : "off"));
    return words;
  }
  return {};
}

std::vector<std::string> qos_show_words(std::string_view tool, const std::string& netdev) {
  if (tool == "mlnx_qos") return {"mlnx_qos", "-i", netdev};
  return {"dcb", "pfc", "show", "dev", netdev};
}

std::optional<std::string> qos_value(std::string_view tool, std::string_view setting,
                                     std::string_view output) {
  if (tool == "mlnx_qos" && setting == "pfc") return settings::pfc_in_mlnx_qos(output);
  if (tool == "mlnx_qos" && setting == "trust") return settings::trust_in_mlnx_qos(output);
  if (tool == "dcb" && setting == "pfc") return settings::pfc_in_dcb(output);
  return std::nullopt;
}

QosTools::QosTools(std::string netdev, Run run, Has has)
    : netdev_(std::move(netdev)),
      run_(run ? std::move(run) : Run(run_for_real)),
      has_(has ? std::move(has) : Has([](std::string_view program) {
        return perftest::find_on_path(program).has_value();
      })) {}

std::string QosTools::tool_for(const settings::Setting& s) const {
  if (s.name != "pfc" && s.name != "trust") return {};
  if (has_("mlnx_qos")) return "mlnx_qos";
  if (s.name == "pfc" && has_("dcb")) return "dcb";
  return {};
}

bool QosTools::has(const settings::Setting& s, std::string* why_not) const {
  if (!tool_for(s).empty()) return true;
  if (why_not != nullptr)
    *why_not = s.name == "trust" ? "the trust mode is set with mlnx_qos (MLNX_OFED), which this "
                                   "host does not have"
               : s.name == "pfc" ? "PFC is set with mlnx_qos or dcb (iproute2), and this host has "
                                   "neither"
                                 : fmt::format("{} is not set with a QoS tool", s.name);
  return false;
}

std::optional<std::string> QosTools::read(const settings::Setting& s) const {
  const std::string tool = tool_for(s);
  if (tool.empty()) return std::nullopt;
  const std::vector<std::string> words = qos_show_words(tool, netdev_);
  const ToolRun shown = run_(words);
  if (shown.exit_code != 0)
    throw Error(ExitCode::infrastructure,
                fmt::format("{} failed (exit {}): {}", fmt::join(words, " "), shown.exit_code,
                            shown.err.empty() ? shown.out : shown.err));
  if (auto value = qos_value(tool, s.name, shown.out)) return value;
  throw Error(ExitCode::infrastructure,
              fmt::format("{} printed no {} for {}", fmt::join(words, " "), s.name, netdev_));
}

void QosTools::write(const settings::Setting& s, const std::string& canonical) const {
  const std::vector<std::string> words = qos_set_words(tool_for(s), s.name, netdev_, canonical);
  if (words.empty()) throw input_error(fmt::format("{}: {} cannot be set here", netdev_, s.name));
  const ToolRun set = run_(words);
  if (set.exit_code != 0)
    throw Error(ExitCode::infrastructure,
                fmt::format("{} was refused (exit {}): {}", fmt::join(words, " "), set.exit_code,
                            set.err.empty() ? set.out : set.err));
}

std::string QosTools::where(const settings::Setting& s) const {
  const std::string tool = tool_for(s);
  return tool.empty() ? std::string() : fmt::format("{} (dev {})", tool, netdev_);
}

HostNic::HostNic(const std::string& root, std::string netdev)
    : netdev_(std::move(netdev)),
      files_(std::make_unique<settings::NicFiles>(root, netdev_)),
      tools_(std::make_unique<QosTools>(netdev_)) {}

const settings::Target& HostNic::part(const settings::Setting& s) const {
  // A setting with a file is written there (mtu too, although `ip link` could); PFC and trust
  // have none.
  return s.sysfs.empty() && s.debugfs.empty() && !s.tool.empty() ? *tools_ : *files_;
}

bool HostNic::has(const settings::Setting& s, std::string* why_not) const {
  return part(s).has(s, why_not);
}
std::optional<std::string> HostNic::read(const settings::Setting& s) const {
  return part(s).read(s);
}
void HostNic::write(const settings::Setting& s, const std::string& canonical) const {
  part(s).write(s, canonical);
}
std::string HostNic::where(const settings::Setting& s) const {
  return part(s).where(s);
}

}  // namespace rocehil::agent
