#pragma once

// The kernel's routes and neighbours, read over rtnetlink: the forwarding loop switches the
// kernel's forwarding off (ip_forward=0) but the kernel keeps the routes (`up`'s static ones, or
// those FRR's zebra programs), so the loop dumps them at start and again whenever RouteWatch says
// they changed. The parsers are pure functions of the bytes one recv() returned; the sockets
// around them are thin.

#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "dataplane/fib.hpp"

namespace rocehil::testbed::dataplane {

// Every usable IPv4 route of the RTM_NEWROUTE messages in `bytes` (one recv() of netlink
// messages: several nlmsghdr), tables main (254) and local (255) only: RTA_DST and rtm_dst_len,
// rtm_type (RouteKind's kinds; multicast, anycast and NAT routes are left out), RTA_OIF and
// RTA_GATEWAY, or RTA_MULTIPATH (a struct rtnexthop list, each with its own RTA_GATEWAY).
// Next hops the kernel marks dead (RTNH_F_DEAD: their link is down) are left out, and a unicast
// route left without one is left out, as the kernel looks past it. NLMSG_DONE sets `done` and
// ends the parse. Throws rocehil::Error (infrastructure): a truncated or malformed message
// (never reading past `bytes`), an NLMSG_ERROR with an error, or a route that names only a
// nexthop object (net.ipv4.nexthop_compat_mode=0).
std::vector<Route> parse_route_messages(std::span<const std::uint8_t> bytes, bool& done);

struct Neighbor {
  int ifindex = 0;
  std::uint32_t address = 0;  // host byte order
  std::array<std::uint8_t, 6> mac{};
};

// The RTM_NEWNEIGH messages in `bytes` that give a usable IPv4 neighbour: AF_INET, NDA_DST and
// a 6-byte NDA_LLADDR, state not NUD_FAILED, NUD_INCOMPLETE or NUD_NOARP. `done` and the errors
// as parse_route_messages.
std::vector<Neighbor> parse_neighbor_messages(std::span<const std::uint8_t> bytes, bool& done);

// The current network namespace's routes (tables main and local) and IPv4 neighbours: one
// NETLINK_ROUTE socket for each dump (NLM_F_DUMP), read until NLMSG_DONE. Throws rocehil::Error
// (infrastructure) naming what failed.
std::vector<Route> dump_routes();
std::vector<Neighbor> dump_neighbors();

// A NETLINK_ROUTE socket subscribed to RTMGRP_IPV4_ROUTE, RTMGRP_IPV4_IFADDR, RTMGRP_NEIGH and
// RTMGRP_LINK (the kernel marks IPv4 next hops dead when a link goes down without announcing a
// route change, so a link's change reads as a route change), non-blocking, for the loop's epoll.
// It belongs to the network namespace current when it is made. Move-only.
class RouteWatch {
 public:
  // Throws rocehil::Error (infrastructure) when the socket cannot be made.
  RouteWatch();
  ~RouteWatch();
  RouteWatch(RouteWatch&& other) noexcept;
  RouteWatch& operator=(RouteWatch&& other) noexcept;
  RouteWatch(const RouteWatch&) = delete;
  RouteWatch& operator=(const RouteWatch&) = delete;

  int fd() const noexcept { return fd_; }

  // Reads every pending message; true when a route, an address or a link changed (the loop
  // dumps the routes again). Neighbours announced (RTM_NEWNEIGH, usable as above) are appended to
  // `neighbors`. ENOBUFS (the kernel dropped notifications) reads as a change, so the loop dumps
  // again. Throws rocehil::Error (infrastructure) on a malformed message or a failed read.
  bool drain(std::vector<Neighbor>& neighbors);

 private:
  int fd_ = -1;
  std::vector<std::uint8_t> buffer_;
};

}  // namespace rocehil::testbed::dataplane
