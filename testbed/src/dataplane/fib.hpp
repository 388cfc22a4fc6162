#pragma once

// The kernel's forwarding table as the forwarding loop looks it up, once per packet: the routes
// of the main and local tables (netlink_routes.hpp reads them), sorted once when the kernel
// announces a change, then looked up without allocating. Pure: no sockets, no kernel.

#include <cstddef>
#include <cstdint>
#include <vector>

namespace rocehil::testbed::dataplane {

// Addresses are in host byte order. `gateway` 0: the destination is on the link (ARP for it).
struct NextHop {
  int ifindex = 0;
  std::uint32_t gateway = 0;
};

// local: RTN_LOCAL and RTN_BROADCAST (the switch's own addresses: the kernel takes those);
// unreachable: blackhole, unreachable, prohibit and throw (the packet goes nowhere).
enum class RouteKind : std::uint8_t { unicast, local, unreachable };

struct Route {
  std::uint32_t prefix = 0;
  int length = 0;  // 0-32
  RouteKind kind = RouteKind::unicast;
  std::vector<NextHop> hops;  // one or more for unicast (ECMP); none for unreachable
};

class Fib {
 public:
  Fib() = default;
  // Sorts for lookup; the only place that allocates. A route's host bits are cleared.
  explicit Fib(std::vector<Route> routes);

  // The route the kernel would take for `destination`: a local route holding it first (the
  // kernel looks in its local table before main), otherwise the longest prefix holding it; of
  // equal routes the first given (a dump lists the lowest metric first). nullptr when none.
  // No allocation, no exception: called per packet.
  const Route* lookup(std::uint32_t destination) const noexcept;

  // Whether a RouteKind::local route holds `destination` (an address of the switch, one of its
  // broadcasts, 127/8): the packet is the kernel's (ARP, BGP, BFD, SNMP), not forwarded.
  bool is_local(std::uint32_t destination) const noexcept;

  const std::vector<Route>& routes() const noexcept { return routes_; }

 private:
  // The routes of one (local or not, length) pair: [begin, end) of routes_, sorted by prefix.
  struct Group {
    std::size_t begin = 0;
    std::size_t end = 0;
    std::uint32_t mask = 0;
  };
  std::vector<Route> routes_;
  std::vector<Group> groups_;  // local groups first, then longest first: lookup's order
};

// The next hop a flow takes among `route.hops`, as the kernel's ECMP does with equal weights:
// `flow_hash` modulo the number of hops. The caller's hash must be mixed (a 5-tuple hash), so
// its low bits spread. A route without hops gives a NextHop with ifindex 0 (nowhere).
const NextHop& pick_next_hop(const Route& route, std::uint32_t flow_hash) noexcept;

}  // namespace rocehil::testbed::dataplane
