#pragma once

// A switch's routing under --routing bgp as its FRR daemons report it: each BGP session with its
// BFD state, and the routes to the racks with the next hops zebra installed. Parsed from vtysh's
// JSON (`show bgp summary json`, `show bfd peers json`, `show ip route json`); pure, so tested
// against what FRR 8.4 prints. `status` shows it, `up` waits for it (routing/frr_daemons.hpp).

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "rocehil/testbed/frr_files.hpp"
#include "rocehil/testbed/topology.hpp"

namespace rocehil::testbed {

struct BgpSession {
  BgpNeighbor neighbor;     // as configured
  std::string state;        // bgpd's: Established, Active, Connect, Idle, ...
  long long uptime_ms = 0;  // how long it has been Established, 0 otherwise
  long long prefixes_received = 0;
  std::string bfd;  // bfdd's state of the session: up, down, init, ...; empty when it has none
};

struct RouteNextHop {
  std::string address;
  std::string interface;
};

// A route to a rack's /24 as zebra holds it.
struct RackRoute {
  std::string prefix;
  std::string protocol;                 // bgp, connected, ...; empty when there is no route
  bool installed = false;               // in the kernel's FIB
  std::vector<RouteNextHop> next_hops;  // those in the FIB
};

struct SwitchRouting {
  std::vector<BgpSession> sessions;  // one per bgp_neighbors(), in that order
  std::vector<RackRoute> routes;     // one per routed_rack_prefixes(), in that order
  std::string problem;               // why vtysh could not be read; empty when it could
};

// The racks' prefixes a switch must reach over the fabric: a leaf every other rack's, a spine
// every rack's.
std::vector<std::string> routed_rack_prefixes(const Namespace& ns, const Topology& t);

// How many next hops a converged switch has to each of those: a leaf one per spine, a spine one.
std::size_t expected_next_hops(const Namespace& ns, const Topology& t);

// The sessions of `expected` as `bgp_summary` (show bgp summary json) and `bfd_peers` (show bfd
// peers json) report them; one missing from the summary reads state "not configured". Throws
// nlohmann::json::exception when a field has the wrong type.
std::vector<BgpSession> parse_sessions(const std::vector<BgpNeighbor>& expected,
                                       const nlohmann::json& bgp_summary,
                                       const nlohmann::json& bfd_peers);

// The selected route to each of `prefixes` in `ip_route` (show ip route json), with the next
// hops that are in the FIB.
std::vector<RackRoute> parse_rack_routes(const std::vector<std::string>& prefixes,
                                         const nlohmann::json& ip_route);

// What keeps switch `ns` from being converged, one line each ("session to s1 (198.18.101.3
// over l1-s1) is Active", "198.18.2.0/24 has 1 of 2 next hops"); empty when every session is
// Established and every rack is reached over every path.
std::vector<std::string> routing_problems(const Namespace& ns, const Topology& t,
                                          const SwitchRouting& routing);

}  // namespace rocehil::testbed
