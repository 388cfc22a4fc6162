#include "dataplane/netlink_routes.hpp"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <linux/neighbour.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "rocehil/common/error.hpp"

namespace rocehil::testbed::dataplane {
namespace {

using NetlinkBytes = std::span<const std::uint8_t>;

// The most one recv() of a dump returns is 32 KiB (the kernel sizes a dump's messages to it);
// twice that leaves room, and a notification is far smaller.
constexpr std::size_t netlink_receive_bytes = 64 * 1024;

Error malformed_netlink(std::string_view what) {
  return Error(ExitCode::infrastructure,
               fmt::format("a malformed netlink message from the kernel: {} (report it with "
                           "`uname -r`; the forwarding loop cannot trust this answer)",
                           what));
}

// Netlink bytes in a span promise no alignment: every struct is copied out.
template <class T>
T copy_netlink_struct(NetlinkBytes bytes) {
  T value{};
  std::memcpy(&value, bytes.data(), sizeof value);
  return value;
}

struct NetlinkAttribute {
  std::uint16_t type = 0;
  NetlinkBytes payload;
};

// Calls `each(NetlinkAttribute)` for each struct rtattr in `bytes`. Fewer bytes than an
// attribute's header at the end are the last attribute's padding.
template <class Each>
void for_each_netlink_attribute(NetlinkBytes bytes, std::string_view where, Each&& each) {
  while (bytes.size() >= sizeof(rtattr)) {
    const auto header = copy_netlink_struct<rtattr>(bytes);
    if (header.rta_len < sizeof(rtattr) || header.rta_len > bytes.size())
      throw malformed_netlink(
          fmt::format("{}: an attribute (type {}) of rta_len {} with {} bytes left", where,
                      header.rta_type, header.rta_len, bytes.size()));
    each(NetlinkAttribute{static_cast<std::uint16_t>(header.rta_type & NLA_TYPE_MASK),
                          bytes.subspan(RTA_LENGTH(0), header.rta_len - RTA_LENGTH(0))});
    bytes = bytes.subspan(std::min<std::size_t>(RTA_ALIGN(header.rta_len), bytes.size()));
  }
}

// Calls `each(type, payload)` for each message in `bytes` up to NLMSG_DONE, which sets `done`;
// answers the errors NLMSG_ERROR and NLMSG_DONE carry.
template <class Each>
void for_each_netlink_message(NetlinkBytes bytes, bool& done, Each&& each) {
  bool ended = false;  // `done` is only ever set: a caller may pass it in either state
  while (!bytes.empty() && !ended) {
    if (bytes.size() < sizeof(nlmsghdr))
      throw malformed_netlink(fmt::format("{} bytes left, fewer than a message header's {}",
                                          bytes.size(), sizeof(nlmsghdr)));
    const auto header = copy_netlink_struct<nlmsghdr>(bytes);
    if (header.nlmsg_len < NLMSG_HDRLEN || header.nlmsg_len > bytes.size())
      throw malformed_netlink(fmt::format("a message (type {}) of nlmsg_len {} with {} bytes left",
                                          header.nlmsg_type, header.nlmsg_len, bytes.size()));
    const NetlinkBytes payload = bytes.subspan(NLMSG_HDRLEN, header.nlmsg_len - NLMSG_HDRLEN);
    if (header.nlmsg_type == NLMSG_DONE) {
      done = ended = true;
      // A dump that failed part way says so in NLMSG_DONE's int.
      if (payload.size() >= sizeof(int)) {
        const int error = copy_netlink_struct<int>(payload);
        if (error < 0) throw system_error("the kernel ended its dump with an error", -error);
      }
    } else if (header.nlmsg_type == NLMSG_ERROR) {
      if (payload.size() < sizeof(int))
        throw malformed_netlink(fmt::format("an NLMSG_ERROR of {} bytes", payload.size()));
      const int error = copy_netlink_struct<int>(payload);
      if (error < 0) throw system_error("the kernel refused the netlink request", -error);
    } else if (header.nlmsg_type >= NLMSG_MIN_TYPE) {
      each(header.nlmsg_type, payload);
    }
    bytes = bytes.subspan(std::min<std::size_t>(NLMSG_ALIGN(header.nlmsg_len), bytes.size()));
  }
}

std::uint32_t attribute_u32(const NetlinkAttribute& a, std::string_view name) {
  if (a.payload.size() != sizeof(std::uint32_t))
    throw malformed_netlink(fmt::format("{} of {} bytes, not 4", name, a.payload.size()));
  return copy_netlink_struct<std::uint32_t>(a.payload);
}

std::uint32_t attribute_ipv4(const NetlinkAttribute& a, std::string_view name) {
  return ntohl(attribute_u32(a, name));
}

// A gateway as RTA_GATEWAY or RTA_VIA gives it; an IPv6 one (`via inet6`) cannot be reached
// over IPv4's ARP, so the hop is unusable here.
struct ParsedGateway {
  std::uint32_t address = 0;
  bool usable = true;
};

void read_gateway(const NetlinkAttribute& a, ParsedGateway& gateway) {
  if (a.type == RTA_GATEWAY) {
    gateway.address = attribute_ipv4(a, "RTA_GATEWAY");
    return;
  }
  // RTA_VIA: struct rtvia, a 16-bit family then the address.
  if (a.payload.size() < sizeof(rtvia))
    throw malformed_netlink(fmt::format("RTA_VIA of {} bytes", a.payload.size()));
  const auto via = copy_netlink_struct<rtvia>(a.payload);
  const NetlinkBytes address = a.payload.subspan(sizeof(rtvia));
  if (via.rtvia_family == AF_INET && address.size() == 4)
    gateway.address = ntohl(copy_netlink_struct<std::uint32_t>(address));
  else
    gateway.usable = false;
}

// RTA_MULTIPATH: struct rtnexthop, each followed by its own attributes, rtnh_len covering both.
void read_multipath(NetlinkBytes bytes, std::vector<NextHop>& hops) {
  while (bytes.size() >= sizeof(rtnexthop)) {
    const auto nh = copy_netlink_struct<rtnexthop>(bytes);
    if (nh.rtnh_len < sizeof(rtnexthop) || nh.rtnh_len > bytes.size())
      throw malformed_netlink(
          fmt::format("RTA_MULTIPATH: a next hop of rtnh_len {} with {} bytes left", nh.rtnh_len,
                      bytes.size()));
    ParsedGateway gateway;
    for_each_netlink_attribute(bytes.subspan(RTNH_LENGTH(0), nh.rtnh_len - RTNH_LENGTH(0)),
                               "RTA_MULTIPATH next hop", [&](const NetlinkAttribute& a) {
                                 if (a.type == RTA_GATEWAY || a.type == RTA_VIA)
                                   read_gateway(a, gateway);
                               });
    if (!(nh.rtnh_flags & RTNH_F_DEAD) && gateway.usable && nh.rtnh_ifindex > 0)
      hops.push_back({nh.rtnh_ifindex, gateway.address});
    bytes = bytes.subspan(std::min<std::size_t>(RTNH_ALIGN(nh.rtnh_len), bytes.size()));
  }
  if (!bytes.empty())
    throw malformed_netlink(
        fmt::format("RTA_MULTIPATH: {} bytes left after its next hops", bytes.size()));
}

std::optional<RouteKind> route_kind_of(std::uint8_t rtm_type) {
  switch (rtm_type) {
    case RTN_UNICAST: return RouteKind::unicast;
    case RTN_LOCAL:
    case RTN_BROADCAST: return RouteKind::local;
    case RTN_BLACKHOLE:
    case RTN_UNREACHABLE:
    case RTN_PROHIBIT:
    case RTN_THROW: return RouteKind::unreachable;
    default: return std::nullopt;  // multicast, anycast, NAT: not IPv4 forwarding's
  }
}

std::optional<Route> parse_one_route(NetlinkBytes payload) {
  if (payload.size() < sizeof(rtmsg))
    throw malformed_netlink(
        fmt::format("a route message of {} bytes, shorter than struct rtmsg", payload.size()));
  const auto rtm = copy_netlink_struct<rtmsg>(payload);
  if (rtm.rtm_family != AF_INET || (rtm.rtm_flags & RTM_F_CLONED)) return std::nullopt;
  if (rtm.rtm_dst_len > 32)
    throw malformed_netlink(fmt::format("an IPv4 route of rtm_dst_len {}", rtm.rtm_dst_len));
  std::uint32_t table = rtm.rtm_table;
  Route route;
  route.length = rtm.rtm_dst_len;
  NextHop single;
  ParsedGateway single_gateway;
  std::vector<NextHop> multipath;
  bool has_multipath = false;
  bool has_nexthop_object = false;
  const NetlinkBytes attributes =
      payload.subspan(std::min<std::size_t>(NLMSG_ALIGN(sizeof(rtmsg)), payload.size()));
  for_each_netlink_attribute(attributes, "a route message", [&](const NetlinkAttribute& a) {
    switch (a.type) {
      case RTA_TABLE: table = attribute_u32(a, "RTA_TABLE"); break;
      case RTA_DST: route.prefix = attribute_ipv4(a, "RTA_DST"); break;
      case RTA_OIF: single.ifindex = static_cast<int>(attribute_u32(a, "RTA_OIF")); break;
      case RTA_GATEWAY:
      case RTA_VIA: read_gateway(a, single_gateway); break;
      case RTA_MULTIPATH:
        has_multipath = true;
        read_multipath(a.payload, multipath);
        break;
      case RTA_NH_ID: has_nexthop_object = true; break;
      default: break;
    }
  });
  const std::optional<RouteKind> kind = route_kind_of(rtm.rtm_type);
  if (!kind || (table != RT_TABLE_MAIN && table != RT_TABLE_LOCAL)) return std::nullopt;
  route.kind = *kind;
  if (route.kind == RouteKind::unreachable) return route;
  if (has_multipath) {
    route.hops = std::move(multipath);
  } else if (single.ifindex > 0) {
    // A single next hop's flags (RTNH_F_DEAD) are in rtm_flags.
    single.gateway = single_gateway.address;
    if (!(rtm.rtm_flags & RTNH_F_DEAD) && single_gateway.usable) route.hops.push_back(single);
  } else if (has_nexthop_object) {
    throw Error(ExitCode::infrastructure,
                fmt::format("the kernel's route to {}.{}.{}.{}/{} names only a nexthop object: the "
                            "forwarding loop needs its next hops in the route (set "
                            "net.ipv4.nexthop_compat_mode=1, or run zebra with `no zebra nexthop "
                            "kernel enable`)",
                            route.prefix >> 24, (route.prefix >> 16) & 0xff,
                            (route.prefix >> 8) & 0xff, route.prefix & 0xff, route.length));
  }
  if (route.hops.empty()) return std::nullopt;  // every next hop dead: the kernel looks past it
  return route;
}

std::optional<Neighbor> parse_one_neighbor(NetlinkBytes payload) {
  if (payload.size() < sizeof(ndmsg))
    throw malformed_netlink(
        fmt::format("a neighbour message of {} bytes, shorter than struct ndmsg", payload.size()));
  const auto ndm = copy_netlink_struct<ndmsg>(payload);
  Neighbor neighbor;
  neighbor.ifindex = ndm.ndm_ifindex;
  bool has_address = false;
  bool has_mac = false;
  const NetlinkBytes attributes =
      payload.subspan(std::min<std::size_t>(NLMSG_ALIGN(sizeof(ndmsg)), payload.size()));
  for_each_netlink_attribute(attributes, "a neighbour message", [&](const NetlinkAttribute& a) {
    if (a.type == NDA_DST && ndm.ndm_family == AF_INET) {
      neighbor.address = attribute_ipv4(a, "NDA_DST");
      has_address = true;
    } else if (a.type == NDA_LLADDR && a.payload.size() == neighbor.mac.size()) {
      std::copy(a.payload.begin(), a.payload.end(), neighbor.mac.begin());
      has_mac = true;
    }
  });
  const bool unusable = (ndm.ndm_state & (NUD_FAILED | NUD_INCOMPLETE | NUD_NOARP)) != 0;
  if (ndm.ndm_family != AF_INET || unusable || !has_address || !has_mac) return std::nullopt;
  return neighbor;
}

class OwnedNetlinkSocket {
 public:
  OwnedNetlinkSocket(int flags, std::string_view what)
      : fd_(::socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC | flags, NETLINK_ROUTE)) {
    if (fd_ < 0) throw system_error(fmt::format("{}: opening a NETLINK_ROUTE socket", what), errno);
  }
  ~OwnedNetlinkSocket() {
    if (fd_ >= 0) ::close(fd_);
  }
  OwnedNetlinkSocket(const OwnedNetlinkSocket&) = delete;
  OwnedNetlinkSocket& operator=(const OwnedNetlinkSocket&) = delete;
  int get() const { return fd_; }
  int release() { return std::exchange(fd_, -1); }

 private:
  int fd_;
};

// One recv() of netlink messages from the kernel into `buffer`: its length, or -1 with errno
// (EAGAIN, ENOBUFS) left for the caller. Messages another process sent are read and dropped.
ssize_t receive_from_kernel(int fd, std::vector<std::uint8_t>& buffer, std::string_view what) {
  for (;;) {
    sockaddr_nl sender{};
    iovec io{buffer.data(), buffer.size()};
    msghdr message{};
    message.msg_name = &sender;
    message.msg_namelen = sizeof sender;
    message.msg_iov = &io;
    message.msg_iovlen = 1;
    const ssize_t n = ::recvmsg(fd, &message, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return n;
    if (message.msg_flags & MSG_TRUNC)
      throw malformed_netlink(
          fmt::format("{}: a message longer than {} bytes", what, buffer.size()));
    if (sender.nl_pid != 0) continue;
    return n;
  }
}

template <class Body, class Parse>
auto dump_netlink(std::uint16_t type, const Body& body, std::string_view what, Parse parse) {
  try {
    OwnedNetlinkSocket socket(0, what);
    std::vector<std::uint8_t> request(NLMSG_LENGTH(sizeof(Body)));
    nlmsghdr header{};
    header.nlmsg_len = static_cast<std::uint32_t>(request.size());
    header.nlmsg_type = type;
    header.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
    header.nlmsg_seq = 1;
    std::memcpy(request.data(), &header, sizeof header);
    std::memcpy(request.data() + NLMSG_HDRLEN, &body, sizeof body);
    sockaddr_nl kernel{};
    kernel.nl_family = AF_NETLINK;
    for (;;) {
      const ssize_t sent = ::sendto(socket.get(), request.data(), request.size(), 0,
                                    reinterpret_cast<const sockaddr*>(&kernel), sizeof kernel);
      if (sent >= 0) break;
      if (errno != EINTR) throw system_error(fmt::format("{}: sending the request", what), errno);
    }
    std::vector<std::uint8_t> buffer(netlink_receive_bytes);
    decltype(parse(NetlinkBytes{}, std::declval<bool&>())) all;
    bool done = false;
    while (!done) {
      const ssize_t n = receive_from_kernel(socket.get(), buffer, what);
      if (n < 0) throw system_error(fmt::format("{}: reading the answer", what), errno);
      if (n == 0)
        throw malformed_netlink(fmt::format("{}: the answer ended before NLMSG_DONE", what));
      auto part = parse(NetlinkBytes(buffer.data(), static_cast<std::size_t>(n)), done);
      all.insert(all.end(), std::make_move_iterator(part.begin()),
                 std::make_move_iterator(part.end()));
    }
    return all;
  } catch (const Error& e) {
    // The parsers do not know which dump they read: say it once, here.
    const std::string message = e.what();
    if (message.starts_with(what)) throw;
    throw Error(e.exit_code(), fmt::format("{}: {}", what, message), e.code());
  }
}

}  // namespace

std::vector<Route> parse_route_messages(std::span<const std::uint8_t> bytes, bool& done) {
  std::vector<Route> routes;
  for_each_netlink_message(bytes, done, [&](std::uint16_t type, NetlinkBytes payload) {
    if (type != RTM_NEWROUTE) return;
    if (auto route = parse_one_route(payload)) routes.push_back(std::move(*route));
  });
  return routes;
}

std::vector<Neighbor> parse_neighbor_messages(std::span<const std::uint8_t> bytes, bool& done) {
  std::vector<Neighbor> neighbors;
  for_each_netlink_message(bytes, done, [&](std::uint16_t type, NetlinkBytes payload) {
    if (type != RTM_NEWNEIGH) return;
    if (auto neighbor = parse_one_neighbor(payload)) neighbors.push_back(*neighbor);
  });
  return neighbors;
}

std::vector<Route> dump_routes() {
  rtmsg body{};
  body.rtm_family = AF_INET;
  return dump_netlink(RTM_GETROUTE, body, "dumping the kernel's IPv4 routes", parse_route_messages);
}

std::vector<Neighbor> dump_neighbors() {
  ndmsg body{};
  body.ndm_family = AF_INET;
  return dump_netlink(RTM_GETNEIGH, body, "dumping the kernel's IPv4 neighbours",
                      parse_neighbor_messages);
}

RouteWatch::RouteWatch() : buffer_(netlink_receive_bytes) {
  constexpr std::string_view what = "watching the kernel's routes";
  OwnedNetlinkSocket socket(SOCK_NONBLOCK, what);
  // A burst of routes (BGP converging, a link down) fits, so ENOBUFS and its full dump stay rare;
  // SO_RCVBUFFORCE passes rmem_max as root, SO_RCVBUF is the fallback's best.
  const int receive_buffer = 4 * 1024 * 1024;
  if (::setsockopt(socket.get(), SOL_SOCKET, SO_RCVBUFFORCE, &receive_buffer,
                   sizeof receive_buffer) != 0)
    ::setsockopt(socket.get(), SOL_SOCKET, SO_RCVBUF, &receive_buffer, sizeof receive_buffer);
  sockaddr_nl groups{};
  groups.nl_family = AF_NETLINK;
  groups.nl_groups = RTMGRP_IPV4_ROUTE | RTMGRP_IPV4_IFADDR | RTMGRP_NEIGH | RTMGRP_LINK;
  if (::bind(socket.get(), reinterpret_cast<const sockaddr*>(&groups), sizeof groups) != 0)
    throw system_error(fmt::format("{}: subscribing to the route, address, neighbour and link "
                                   "groups",
                                   what),
                       errno);
  fd_ = socket.release();
}

RouteWatch::~RouteWatch() {
  if (fd_ >= 0) ::close(fd_);
}

RouteWatch::RouteWatch(RouteWatch&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)), buffer_(std::move(other.buffer_)) {}

RouteWatch& RouteWatch::operator=(RouteWatch&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(other.fd_, -1);
    buffer_ = std::move(other.buffer_);
  }
  return *this;
}

bool RouteWatch::drain(std::vector<Neighbor>& neighbors) {
  constexpr std::string_view what = "reading the kernel's route notifications";
  bool changed = false;
  for (;;) {
    const ssize_t n = receive_from_kernel(fd_, buffer_, what);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return changed;
    if (n < 0 && errno == ENOBUFS) {
      changed = true;  // notifications lost: only a full dump knows the table now
      continue;
    }
    if (n < 0) throw system_error(std::string(what), errno);
    bool done = false;  // notifications end with no NLMSG_DONE
    for_each_netlink_message(NetlinkBytes(buffer_.data(), static_cast<std::size_t>(n)), done,
                             [&](std::uint16_t type, NetlinkBytes payload) {
                               switch (type) {
                                 case RTM_NEWROUTE:
                                 case RTM_DELROUTE:
                                 case RTM_NEWADDR:
                                 case RTM_DELADDR:
                                 case RTM_NEWLINK:
                                 case RTM_DELLINK: changed = true; break;
                                 case RTM_NEWNEIGH:
                                   if (auto neighbor = parse_one_neighbor(payload))
                                     neighbors.push_back(*neighbor);
                                   break;
                                 default: break;
                               }
                             });
  }
}

}  // namespace rocehil::testbed::dataplane
