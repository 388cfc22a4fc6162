#pragma once

// Which of a port's eight queues sends next: strict-priority queues first (the higher class
// first), then deficit weighted round robin among the rest, each visit crediting a queue its
// weight times a quantum of bytes. A queue that is empty or paused (PFC received for its
// priority) is passed over and keeps no credit while empty. Allocation-free: it sits in the
// forwarding loop.

#include <array>
#include <cstdint>

#include "lossless/qos_profile.hpp"

namespace rocehil::testbed::lossless {

class EgressScheduler {
 public:
  // Bytes a weight of 1 earns per visit: a jumbo frame, so every visit can send one.
  static constexpr std::uint32_t quantum_bytes = 9216;

  explicit EgressScheduler(const PortProfile& profile);

  // The queue whose head goes next, or -1 when none may send. `head_bytes[q]` is the size of
  // queue q's first packet (0: empty); bit q of `paused` set: q may not send.
  int pick(const std::array<std::uint32_t, classes>& head_bytes, std::uint8_t paused);
  // The head of `queue` was sent: its credit pays for it.
  void sent(int queue, std::uint32_t bytes);

 private:
  std::array<bool, classes> strict_{};
  std::array<std::uint64_t, classes> quantum_{};
  std::array<std::int64_t, classes> deficit_{};
  int current_ = 0;
  bool credited_ = false;  // the current queue has had its quantum for this visit
};

}  // namespace rocehil::testbed::lossless
