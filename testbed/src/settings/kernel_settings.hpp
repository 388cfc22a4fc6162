#pragma once

// The switch settings that live in the kernel of a running testbed (the ECN marking rules,
// the tbf qdiscs): read and written with nft and tc in its namespaces. lifecycle/ puts them
// together with the lossless switches' configurations (read_fabric_settings).

#include <set>
#include <string>
#include <string_view>

#include "rocehil/testbed/fabric_settings.hpp"
#include "rocehil/testbed/state.hpp"
#include "rocehil/testbed/topology.hpp"

namespace rocehil::testbed {

// The state of the testbed in `dir`, which must be up: its namespaces are where the settings
// live, and its options are what `set` records. Root, ip, tc and nft; `command` names the
// command for the root check. Throws rocehil::Error (bad input) naming DIR and the fix.
TestbedState running_testbed(const std::string& dir, std::string_view command);

// `tc -j qdisc show` in `ns`; throws rocehil::Error (infrastructure) when tc fails.
std::string tc_qdiscs(const Namespace& ns);

// What nft and tc print in every namespace with fabric ports: tc everywhere, nft in the switches
// when they mark by rate (with ECN, without --lossless).
FabricReadings read_kernel_fabric(const Topology& t, const TestbedOptions& options);

// Writes `settings` (of fabric_setting_names()) as `options` says into the kernel of every
// namespace that holds them, `t` being built from `options`: the ECN rules replaced, the tbf
// qdiscs of the uplinks or host links replaced or deleted. On a --lossless testbed only the hosts'
// tbf (1 ms of queue, as up writes it): the switches' ports are paced by their forwarding process.
// Throws rocehil::Error (infrastructure) when nft or tc fails.
void write_kernel_settings(const Topology& t, const TestbedOptions& options,
                           const std::set<std::string>& settings);

}  // namespace rocehil::testbed
