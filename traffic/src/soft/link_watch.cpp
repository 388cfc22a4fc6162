#include "soft/link_watch.hpp"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>

namespace rocehil::traffic::soft {

namespace {

// IFF_LOWER_UP of <linux/if.h> (the kernel's netif_carrier_ok), which <net/if.h> does not name.
constexpr unsigned carrier_flag = 1u << 16;

// The interface holding `address`, with its flags; empty when none does.
std::string netdev_of(const std::string& address, unsigned& flags) {
  unsigned char wanted[16] = {};
  const bool v6 = address.find(':') != std::string::npos;
  if (::inet_pton(v6 ? AF_INET6 : AF_INET, address.c_str(), wanted) != 1) return {};
  ifaddrs* all = nullptr;
  if (::getifaddrs(&all) != 0) return {};
  std::string name;
  for (const ifaddrs* a = all; a != nullptr && name.empty(); a = a->ifa_next) {
    if (a->ifa_addr == nullptr) continue;
    if (!v6 && a->ifa_addr->sa_family == AF_INET &&
        std::memcmp(&reinterpret_cast<const sockaddr_in*>(a->ifa_addr)->sin_addr, wanted, 4) == 0)
      name = a->ifa_name;
    if (v6 && a->ifa_addr->sa_family == AF_INET6 &&
        std::memcmp(&reinterpret_cast<const sockaddr_in6*>(a->ifa_addr)->sin6_addr, wanted, 16) ==
            0)
      name = a->ifa_name;
    if (!name.empty()) flags = a->ifa_flags;
  }
  ::freeifaddrs(all);
  return name;
}

}  // namespace

LinkWatch::LinkWatch(const std::string& address) {
  unsigned flags = 0;
  netdev_ = netdev_of(address, flags);
  loopback_ = (flags & IFF_LOOPBACK) != 0;
  if (netdev_.empty() || loopback_) return;
  ifindex_ = static_cast<int>(::if_nametoindex(netdev_.c_str()));
  carrier_ = (flags & carrier_flag) != 0;
  fd_ = ::socket(AF_NETLINK, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, NETLINK_ROUTE);
  if (fd_ < 0) return;  // no events then, as from a NIC that raises none
  sockaddr_nl local{};
  local.nl_family = AF_NETLINK;
  local.nl_groups = RTMGRP_LINK;
  if (::bind(fd_, reinterpret_cast<const sockaddr*>(&local), sizeof local) != 0) {
    ::close(fd_);
    fd_ = -1;
  }
}

LinkWatch::~LinkWatch() {
  if (fd_ >= 0) ::close(fd_);
}

void LinkWatch::poll(std::uint64_t now_ns, DeviceEventLog& log) noexcept {
  if (fd_ < 0 || now_ns < next_check_ns_) return;
  next_check_ns_ = now_ns + 1'000'000;
  while (true) {
    const ssize_t n = ::recv(fd_, buffer_.data(), buffer_.size(), MSG_DONTWAIT);
    if (n <= 0) return;
    auto remaining = static_cast<unsigned>(n);
    for (auto* h = reinterpret_cast<nlmsghdr*>(buffer_.data()); NLMSG_OK(h, remaining);
         h = NLMSG_NEXT(h, remaining)) {
      if (h->nlmsg_type != RTM_NEWLINK) continue;
      const auto* info = static_cast<const ifinfomsg*>(NLMSG_DATA(h));
      if (info->ifi_index != ifindex_) continue;
      const bool carrier = (info->ifi_flags & carrier_flag) != 0;
      if (carrier == carrier_) continue;
      carrier_ = carrier;
      // Set down by hand (`ip link set DEV down`) or lost on the wire.
      const char* detail = carrier                           ? "carrier back"
                           : (info->ifi_flags & IFF_UP) == 0 ? "link set down"
                                                             : "carrier lost";
      try {
        log.add({.at_ns = wall_clock_ns(),
                 .device = netdev_,
                 .kind = carrier ? "port_active" : "port_error",
                 .detail = detail});
      } catch (...) {
        // Out of memory for an event: it is lost, the traffic is not.
      }
    }
  }
}

}  // namespace rocehil::traffic::soft
