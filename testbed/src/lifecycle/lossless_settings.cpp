#include "lifecycle/lossless_settings.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "dataplane/switch_config.hpp"
#include "rocehil/common/error.hpp"
#include "rocehil/testbed/fabric_settings.hpp"
#include "rocehil/testbed/paths.hpp"
#include "rocehil/testbed/switch_knobs.hpp"

namespace rocehil::testbed {

namespace {

const std::string& reading(const std::map<std::string, std::string>& from, const Namespace& ns,
                           std::string_view what) {
  const auto it = from.find(ns.netns);
  if (it == from.end())
    throw Error(ExitCode::infrastructure, fmt::format("no {} for {}", what, ns.netns));
  return it->second;
}

}  // namespace

std::map<std::string, std::string> lossless_settings_in_force(const Topology& t,
                                                              const TestbedOptions& options,
                                                              const LosslessReadings& readings) {
  const TestbedPaths paths{options.dir};
  std::map<std::string, std::vector<SettingReading>> switches;  // knobs, one reading per switch
  std::map<std::string, std::vector<SettingReading>> ports;     // the two rates, one per port
  for (const auto& ns : t.namespaces) {
    const auto fabric = fabric_interfaces(ns);
    if (fabric.empty()) continue;
    if (!is_switch(ns)) {
      const auto rates = parse_tbf_rates(reading(readings.tc, ns, "tc output"));
      for (const Interface* i : fabric) {
        const auto setting = i->kind == LinkKind::host ? host_setting : uplink_setting;
        const auto rate = rates.find(i->name);
        std::string value = "0";  // no tbf: unshaped
        if (rate != rates.end()) {
          const auto mbps = tbf_mbps_of(rate->second);
          if (!mbps)
            throw Error(ExitCode::infrastructure,
                        fmt::format("{}: the tbf of {} shapes at {} bit/s, which no {} value "
                                    "writes; set it again",
                                    ns.netns, i->name, rate->second * 8, setting));
          value = std::to_string(*mbps);
        }
        ports[std::string(setting)].push_back({ns.netns + " " + i->name, value});
      }
      continue;
    }
    const std::string path = paths.switchd_config(ns);
    dataplane::SwitchConfig config;
    try {
      config = dataplane::parse_switch_config(reading(readings.configs, ns, "configuration"), path);
    } catch (const Error& e) {
      // The file is the testbed's own: one that does not parse is the fabric's fault.
      throw Error(ExitCode::infrastructure, e.what());
    }
    for (const auto knob : knob_names())
      switches[std::string(knob)].push_back(
          {fmt::format("{} ({})", ns.netns, path), knob_text(config.knobs, knob)});
    for (const Interface* i : fabric) {
      const auto port = std::find_if(config.ports.begin(), config.ports.end(),
                                     [&](const auto& p) { return p.ifname == i->name; });
      if (port == config.ports.end())
        throw Error(
            ExitCode::infrastructure,
            fmt::format("{}: no port {}; bring the testbed down and up again", path, i->name));
      const auto setting = i->kind == LinkKind::host ? host_setting : uplink_setting;
      ports[std::string(setting)].push_back(
          {fmt::format("{} {} ({})", ns.netns, i->name, path), std::to_string(port->mbps)});
    }
  }
  std::map<std::string, std::string> out;
  for (const auto& [setting, values] : ports)
    out[setting] = agreed_value(setting, "port", "ports", values, options.dir);
  for (const auto& [setting, values] : switches)
    out[setting] = agreed_value(setting, "switch", "switches", values, options.dir);
  return out;
}

}  // namespace rocehil::testbed
