#include "lossless/egress_scheduler.hpp"

namespace rocehil::testbed::lossless {

EgressScheduler::EgressScheduler(const PortProfile& profile) {
  for (int q = 0; q < classes; ++q) {
    strict_[q] = profile.queues[q].strict;
    quantum_[q] =
        std::uint64_t{profile.queues[q].weight == 0 ? 1 : profile.queues[q].weight} * quantum_bytes;
  }
}

int EgressScheduler::pick(const std::array<std::uint32_t, classes>& head_bytes,
                          std::uint8_t paused) {
  const auto may_send = [&](int q) { return head_bytes[q] > 0 && (paused >> q & 1) == 0; };
  for (int q = classes - 1; q >= 0; --q)
    if (strict_[q] && may_send(q)) return q;
  // Each visit credits at least a jumbo frame, so two turns of the wheel find a sender if any.
  for (int step = 0; step < 2 * classes; ++step) {
    const int q = current_;
    if (!strict_[q] && may_send(q)) {
      if (!credited_) {
        deficit_[q] += static_cast<std::int64_t>(quantum_[q]);
        credited_ = true;
      }
      if (deficit_[q] >= static_cast<std::int64_t>(head_bytes[q])) return q;
    } else if (head_bytes[q] == 0) {
      deficit_[q] = 0;  // an empty queue saves no credit for later
    }
    current_ = (current_ + 1) % classes;
    credited_ = false;
  }
  return -1;
}

void EgressScheduler::sent(int queue, std::uint32_t bytes) {
  if (queue >= 0 && queue < classes && !strict_[queue]) deficit_[queue] -= bytes;
}

}  // namespace rocehil::testbed::lossless
