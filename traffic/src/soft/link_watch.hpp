#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "device_events.hpp"

namespace rocehil::traffic::soft {

// The carrier of the netdev a soft provider's address is on, watched as an RNIC watches its port:
// a netlink socket subscribed to link changes (RTMGRP_LINK), read without blocking at most once a
// millisecond from the provider's poll loop. Carrier lost is a port_error event, carrier back a
// port_active one, both with the netdev's name as the device.
class LinkWatch {
 public:
  // Finds the netdev carrying `address`; none (or loopback, which has no carrier) watches nothing.
  explicit LinkWatch(const std::string& address);
  ~LinkWatch();
  LinkWatch(const LinkWatch&) = delete;
  LinkWatch& operator=(const LinkWatch&) = delete;

  const std::string& netdev() const noexcept { return netdev_; }
  bool loopback() const noexcept { return loopback_; }
  void poll(std::uint64_t now_ns, DeviceEventLog& log) noexcept;

 private:
  int fd_ = -1;
  int ifindex_ = 0;
  std::string netdev_;
  bool loopback_ = false;
  bool carrier_ = true;
  std::uint64_t next_check_ns_ = 0;
  std::array<char, 16384> buffer_{};
};

}  // namespace rocehil::traffic::soft
