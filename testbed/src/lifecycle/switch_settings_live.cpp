// read_fabric_settings and apply_fabric_settings (fabric_settings.hpp): the kernel's settings
// (settings/kernel_settings.hpp) and, on a --lossless testbed, the switches' forwarding
// processes' configurations, which only this room may join.

#include <fmt/format.h>

#include <set>

#include "dataplane/switchds.hpp"
#include "guest_nic/guest_nics.hpp"
#include "lifecycle/lossless_settings.hpp"
#include "rocehil/testbed/fabric_settings.hpp"
#include "rocehil/testbed/paths.hpp"
#include "settings/kernel_settings.hpp"
#include "tools/files.hpp"

namespace rocehil::testbed {

std::map<std::string, std::string> read_fabric_settings(const std::string& dir) {
  const TestbedState state = running_testbed(dir, "testbed settings");
  const Topology t = build_topology(state.options, state.mgmt_octet);
  if (!state.options.lossless)
    return fabric_settings_in_force(t, state.options, read_kernel_fabric(t, state.options));
  const TestbedPaths paths{state.options.dir};
  LosslessReadings readings;
  for (const auto& ns : t.namespaces) {
    if (is_switch(ns))
      readings.configs[ns.netns] = read_file(paths.switchd_config(ns));
    else if (!fabric_interfaces(ns).empty())
      readings.tc[ns.netns] = tc_qdiscs(ns);
  }
  return lossless_settings_in_force(t, state.options, readings);
}

std::map<std::string, std::string> apply_fabric_settings(
    const std::string& dir, const std::vector<std::pair<std::string, std::string>>& assignments) {
  TestbedState state = running_testbed(dir, "testbed set");
  const TestbedOptions options = with_switch_settings(state.options, assignments);
  // The topology of the new options: its ports carry the new rates, as `up` would build them.
  const Topology t = build_topology(options, state.mgmt_octet);
  std::set<std::string> names;
  for (const auto& [setting, text] : assignments) names.insert(setting);
  // Every named setting is written, changed or not: setting it again puts a port someone changed
  // by hand back in line.
  write_kernel_settings(t, options, names);
  if (options.lossless) dataplane::reload_switchds(t, options, TestbedPaths{options.dir});
  if (options.lossless && options.vm.enabled)
    guest_nic::reload_guest_nics(t, options, TestbedPaths{options.dir});
  // Recorded only once every namespace and switch has it: after a failure the state still says
  // what was there before, and the read-back shows which ports changed.
  state.options = options;
  write_state(TestbedPaths{state.options.dir}.state(), state);
  std::map<std::string, std::string> set;
  for (const auto& name : names) set[name] = switch_setting_text(options, name);
  return set;
}

}  // namespace rocehil::testbed
