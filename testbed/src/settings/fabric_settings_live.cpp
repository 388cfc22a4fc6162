#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "rocehil/common/error.hpp"
#include "rocehil/testbed/fabric_settings.hpp"
#include "rocehil/testbed/paths.hpp"
#include "rocehil/testbed/scripts.hpp"
#include "rocehil/testbed/state.hpp"
#include "tools/host_checks.hpp"
#include "tools/live.hpp"
#include "tools/process.hpp"

namespace rocehil::testbed {

namespace {

// The state of the testbed in `dir`, which must be up: its namespaces are where the settings
// live, and its options are what `set` records.
TestbedState running_testbed(const std::string& dir, std::string_view command) {
  require_root(command);
  require_tools({"ip", "tc", "nft"});
  if (dir.empty()) throw input_error("--dir is required: the testbed's directory");
  const std::string absolute = absolute_dir(dir);
  auto state = read_state(TestbedPaths{absolute}.state());
  if (!state)
    throw input_error(fmt::format(
        "{} holds no testbed (no testbed.json); bring one up with 'rocehil testbed up --dir {}'",
        absolute, absolute));
  if (state->phase != "up")
    throw input_error(fmt::format(
        "testbed {} in {} is {}, not up; bring it up with 'rocehil testbed up --dir {}'",
        state->options.id, absolute, state->phase, absolute));
  return *state;
}

std::string tc_qdiscs(const Namespace& ns) {
  return run_checked(fmt::format("reading the qdiscs of {}", ns.netns),
                     {"tc", "-n", ns.netns, "-j", "qdisc", "show"});
}

}  // namespace

std::map<std::string, std::string> read_fabric_settings(const std::string& dir) {
  const TestbedState state = running_testbed(dir, "testbed settings");
  const Topology t = build_topology(state.options, state.mgmt_octet);
  FabricReadings readings;
  for (const auto& ns : t.namespaces) {
    if (fabric_interfaces(ns).empty()) continue;
    readings.tc[ns.netns] = tc_qdiscs(ns);
    if (state.options.ecn && is_switch(ns))
      readings.nft[ns.netns] =
          run_checked(fmt::format("reading the ECN marking rules of {}", ns.netns),
                      {"ip", "netns", "exec", ns.netns, "nft", "-j", "list", "table", "ip",
                       ecn_table_name(t.id)});
  }
  return fabric_settings_in_force(t, state.options, readings);
}

void apply_fabric_setting(const std::string& dir, std::string_view setting, int value) {
  TestbedState state = running_testbed(dir, "testbed set");
  const TestbedOptions options = with_fabric_setting(state.options, setting, value);
  // The topology of the new options: its ports carry the new rates, as `up` would build them.
  const Topology t = build_topology(options, state.mgmt_octet);
  for (const auto& ns : t.namespaces) {
    if (setting == ecn_mark_setting) {
      if (const auto batch = ecn_marking_replace_batch(ns, t, options); !batch.empty())
        run_checked(fmt::format("replacing the ECN marking rules in {}", ns.netns),
                    {"ip", "netns", "exec", ns.netns, "nft", "-f", "-"}, batch);
      continue;
    }
    const LinkKind kind = setting == host_setting ? LinkKind::host : LinkKind::uplink;
    if (std::none_of(ns.interfaces.begin(), ns.interfaces.end(),
                     [&](const Interface& i) { return i.kind == kind; }))
      continue;
    std::set<std::string> shaped;
    for (const auto& [ifname, rate] : parse_tbf_rates(tc_qdiscs(ns))) shaped.insert(ifname);
    if (const auto batch = shaping_replace_batch(ns, kind, options.mtu, shaped); !batch.empty())
      run_checked(fmt::format("reshaping {} ports in {}", to_string(kind), ns.netns),
                  {"tc", "-n", ns.netns, "-batch", "-"}, batch);
  }
  // Recorded only once every namespace has it: after a failure the state still says what `up`
  // made, and the read-back shows which ports changed.
  state.options = options;
  write_state(TestbedPaths{state.options.dir}.state(), state);
}

}  // namespace rocehil::testbed
