#pragma once

// What the testbed's data-plane processes (a lossless switch's forwarding, a guest's NIC) are
// built on: file descriptors that close themselves, the monotonic clock, the packet socket of a
// port, and one wait for packets, a deadline and the signals that stop or reload them. They wait
// in epoll: an idle process costs no CPU.

#include <sys/epoll.h>

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>

#include "dataplane/fd.hpp"
#include "dataplane/packet.hpp"

namespace rocehil::testbed::dataplane {

std::uint64_t now_ns();  // CLOCK_MONOTONIC

// Throws rocehil::Error (infrastructure) with `what` and errno's words.
[[noreturn]] void fail(std::string_view what);

// A packet socket on one port: every ethertype in, nothing the port sends itself, buffers for a
// few milliseconds at line rate while the process waits for a CPU, and the port's MAC.
struct PacketPort {
  Fd socket;
  int ifindex = 0;
  Mac mac{};
};
// Throws rocehil::Error: bad input naming `config_path` when `ifname` is not in this namespace,
// infrastructure when the socket cannot be made.
PacketPort open_packet_port(const std::string& ifname, const std::string& config_path);

// One epoll over the caller's descriptors, a timerfd for the next deadline and a signalfd for
// SIGTERM, SIGINT (stop) and SIGHUP (reload), which it blocks.
class EventWait {
 public:
  EventWait();
  // The caller's tags must be below `reserved_tags`.
  static constexpr std::uint64_t reserved_tags = std::uint64_t{1} << 62;

  void watch(int fd, std::uint64_t tag, std::uint32_t events = EPOLLIN);
  void change(int fd, std::uint64_t tag, std::uint32_t events);
  void forget(int fd);

  // Arms the timer for `deadline_ns` (0: none), waits, and returns the caller's events; the
  // timer's and the signals' are taken here (stop_requested, take_reload).
  std::span<const epoll_event> wait(std::uint64_t deadline_ns);
  bool stop_requested() const { return stop_; }
  bool take_reload() { return std::exchange(reload_, false); }

 private:
  Fd epoll_, timer_, signals_;
  std::uint64_t armed_ = 0;
  bool stop_ = false, reload_ = false;
  std::array<epoll_event, 64> events_{};
};

}  // namespace rocehil::testbed::dataplane
