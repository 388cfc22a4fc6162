#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>

#include "soft/priority_pause.hpp"

namespace rocehil::traffic::soft {

// The soft NIC's MAC for pause frames: an AF_PACKET socket on the provider's netdev bound to
// EtherType 0x8808 (MAC control) only, so the kernel copies up nothing else, read without
// blocking from the provider's poll loop (at most every `check_interval_ns`, and at once when
// the provider's wait wakes on it). What it parses drives a PriorityPause that the QPs consult
// before they send.
//
// No socket (loopback, where no pause frame arrives, no netdev, or no CAP_NET_RAW): nothing is
// ever paused and counters() is empty, so the run reports the soft NIC's pause counters as
// absent rather than as zero.
class PfcReceiver {
 public:
  // A quantum is 512 bit times at `port_gbps`; 0: the netdev's speed from sysfs, else 100 Gb/s.
  // `obeyed`: the priorities with PFC on (PriorityPause).
  PfcReceiver(const std::string& netdev, bool loopback, double port_gbps,
              std::uint8_t obeyed = 0xff);
  ~PfcReceiver();
  PfcReceiver(const PfcReceiver&) = delete;
  PfcReceiver& operator=(const PfcReceiver&) = delete;

  int fd() const noexcept { return fd_; }
  double port_gbps() const noexcept { return port_gbps_; }

  // Reads the frames waiting (the poll loop's thread only).
  void poll(std::uint64_t now_ns) noexcept;
  // Read without a lock: only the poll loop's thread, which alone changes the state, calls them.
  bool paused(std::uint8_t priority, std::uint64_t now_ns) const noexcept {
    return state_.paused(priority, now_ns);
  }
  std::uint64_t resumes_at(std::uint8_t priority) const noexcept {
    return state_.resumes_at(priority);
  }

  // By mlx5's `ethtool -S` names: rx_prioP_pause (frames), rx_prioP_pause_duration
  // (microseconds, as mlx5 counts it) for P 0-7, and rx_pause_ctrl_phy (802.3x PAUSE frames).
  // Any thread.
  std::map<std::string, std::uint64_t> counters(std::uint64_t now_ns) const;

  static constexpr std::uint64_t check_interval_ns = 5'000;

 private:
  int fd_ = -1;
  double port_gbps_ = 100;
  std::uint64_t next_check_ns_ = 0;
  mutable std::mutex mutex_;  // the poll loop writes state_ under it; counters() reads under it
  PriorityPause state_;
  std::array<std::uint8_t, 128> buffer_{};  // a MAC control frame is 64 bytes
};

// The netdev's speed from /sys/class/net/NETDEV/speed in Gb/s; 0 when it does not say.
double netdev_speed_gbps(const std::string& netdev);

}  // namespace rocehil::traffic::soft
