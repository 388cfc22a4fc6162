#pragma once

// SONiC's PFC watchdog for one switch: a lossless queue held by PFC received on its port, with
// packets waiting, for the detection time is in a PFC storm (a stuck NIC or a deadlock sending
// XOFF for ever). Its action is SONiC's default, drop: the queue's packets and what arrives for
// it are dropped and the PFC received for it ignored, so the storm cannot spread upstream. Once no
// PFC frame for it has arrived for the restoration time, the queue is restored. Pure: times are
// the caller's clock (ns); sized once, nothing allocates after.

#include <cstdint>
#include <vector>

namespace rocehil::testbed::dataplane {

class PfcWatchdog {
 public:
  // `detection_ns` 0: the watchdog is off.
  PfcWatchdog(int ports, std::uint64_t detection_ns, std::uint64_t restoration_ns);
  void set_times(std::uint64_t detection_ns, std::uint64_t restoration_ns);

  void pfc_received(int port, int priority, std::uint64_t now_ns);

  enum class Event : std::uint8_t { none, storm_detected, restored };
  // What the queue of `priority` on `port` is now: `stuck` when PFC received holds it and it has
  // packets to send.
  Event check(int port, int priority, bool stuck, std::uint64_t now_ns);

  bool storm(int port, int priority) const { return at(port, priority).storm; }
  // When check() next has something to decide for that queue; 0: nothing pending.
  std::uint64_t next_check_ns(int port, int priority) const;

 private:
  struct Queue {
    bool stuck = false;
    std::uint64_t stuck_since = 0;
    std::uint64_t last_pfc = 0;
    bool storm = false;
  };
  Queue& at(int port, int priority) {
    return queues_[static_cast<std::size_t>(port) * 8 + priority];
  }
  const Queue& at(int port, int priority) const {
    return queues_[static_cast<std::size_t>(port) * 8 + priority];
  }

  std::uint64_t detection_ns_, restoration_ns_;
  std::vector<Queue> queues_;
};

}  // namespace rocehil::testbed::dataplane
