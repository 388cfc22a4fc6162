#pragma once

// Whether a packet joins its egress queue, and marked or not: tail drop for a lossy queue past
// its limit, WRED with ECN by the queue's depth. Pure: the random draw is the caller's, so tests
// hold it, and the forwarding loop draws from its own generator without allocating.

#include <cstdint>

#include "lossless/qos_profile.hpp"

namespace rocehil::testbed::lossless {

enum class Admission : std::uint8_t { enqueue, enqueue_marked, drop };

// WRED's probability at a queue depth (bytes already queued when the packet arrives).
double wred_probability(const Wred& wred, std::uint32_t depth_bytes);

// `ect`: the packet is ECN-capable (ECT(0) or ECT(1), not already CE: a CE packet is enqueued as
// it is). `uniform`: a draw in [0, 1).
Admission admit(const QueueProfile& queue, std::uint32_t depth_bytes, std::uint32_t packet_bytes,
                bool ect, double uniform);

}  // namespace rocehil::testbed::lossless
