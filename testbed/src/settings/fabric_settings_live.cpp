#include <fmt/format.h>

#include <algorithm>

#include "rocehil/common/error.hpp"
#include "rocehil/testbed/paths.hpp"
#include "rocehil/testbed/scripts.hpp"
#include "settings/kernel_settings.hpp"
#include "tools/host_checks.hpp"
#include "tools/live.hpp"
#include "tools/process.hpp"

namespace rocehil::testbed {

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

FabricReadings read_kernel_fabric(const Topology& t, const TestbedOptions& options) {
  FabricReadings readings;
  for (const auto& ns : t.namespaces) {
    if (fabric_interfaces(ns).empty()) continue;
    readings.tc[ns.netns] = tc_qdiscs(ns);
    if (options.ecn && !options.lossless && is_switch(ns))
      readings.nft[ns.netns] =
          run_checked(fmt::format("reading the ECN marking rules of {}", ns.netns),
                      {"ip", "netns", "exec", ns.netns, "nft", "-j", "list", "table", "ip",
                       ecn_table_name(t.id)});
  }
  return readings;
}

void write_kernel_settings(const Topology& t, const TestbedOptions& options,
                           const std::set<std::string>& settings) {
  for (const auto& ns : t.namespaces) {
    if (settings.contains(std::string(ecn_mark_setting)) && !options.lossless) {
      if (const auto batch = ecn_marking_replace_batch(ns, t, options); !batch.empty())
        run_checked(fmt::format("replacing the ECN marking rules in {}", ns.netns),
                    {"ip", "netns", "exec", ns.netns, "nft", "-f", "-"}, batch);
    }
    // A lossless switch has no tbf: its forwarding process paces its ports.
    if (options.lossless && is_switch(ns)) continue;
    for (const auto& [setting, port_kind] :
         {std::pair{uplink_setting, LinkKind::uplink}, std::pair{host_setting, LinkKind::host}}) {
      if (!settings.contains(std::string(setting))) continue;
      const LinkKind kind = port_kind;  // a lambda may not capture a structured binding (C++17)
      if (std::none_of(ns.interfaces.begin(), ns.interfaces.end(),
                       [&](const Interface& i) { return i.kind == kind; }))
        continue;
      std::set<std::string> shaped;
      for (const auto& [ifname, rate] : parse_tbf_rates(tc_qdiscs(ns))) shaped.insert(ifname);
      if (const auto batch = shaping_replace_batch(ns, kind, options, shaped); !batch.empty())
        run_checked(fmt::format("reshaping {} ports in {}", to_string(kind), ns.netns),
                    {"tc", "-n", ns.netns, "-batch", "-"}, batch);
    }
  }
}

}  // namespace rocehil::testbed
