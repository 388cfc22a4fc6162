#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "rocehil/testbed/paths.hpp"
#include "rocehil/testbed/topology.hpp"

namespace rocehil::testbed {

// lldpd in every host and switch namespace, on its fabric ports only, so each switch's LLDP-MIB
// (served through its snmpd over AgentX) shows the cabling the topology says.

// The commands lldpcli runs at lldpd's start (lldpd -O): the namespace's name as the system
// name (all namespaces share one host name), its management address as the one advertised, the
// interface name as port ID (as SONiC sends it) and a 5 s transmit interval, so neighbours
// appear within seconds.
std::string lldpd_conf(const Namespace& ns);

// The argv that starts it in its namespace (a switch's also registers with its snmpd); lldpd
// daemonizes.
std::vector<std::string> lldpd_argv(const Namespace& ns, const TestbedPaths& paths);

// Whether `lldpcli -f json0 show configuration` shows lldpd_conf(ns) applied (its last line
// too). lldpcli's `update` rewrites the whole configuration as it read it: sent while lldpd
// still applies its file, it undoes the lines applied in between (the host name, as seen here).
bool lldpd_configured(const nlohmann::json& json0, const Namespace& ns);

struct LldpNeighbor {
  std::string interface;    // the local port it was heard on
  std::string system_name;  // the neighbour's: h1, l1, s1
  std::string port_id;      // the neighbour's port, its interface name
  bool operator==(const LldpNeighbor&) const = default;
};

// Who a namespace's fabric ports should hear: the far end of each host link and uplink.
std::vector<LldpNeighbor> expected_lldp_neighbors(const Namespace& ns, const Topology& t);

// `lldpcli -f json0 show neighbors` (json0: every level a list, whatever the count).
std::vector<LldpNeighbor> parse_lldp_neighbors(const nlohmann::json& json0);

// The expected neighbours not among `seen`, as "h1 on t1-h1" for messages.
std::vector<std::string> missing_lldp_neighbors(const std::vector<LldpNeighbor>& expected,
                                                const std::vector<LldpNeighbor>& seen);

}  // namespace rocehil::testbed
