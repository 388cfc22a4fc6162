#pragma once

// What a lossless switch port does with each traffic class: the model the testbed's lossless
// switches run (docs/rehearsal.md, "A lossless fabric"). Classes are SONiC's: a DSCP picks a
// traffic class (TC), TC n is queue n and PFC priority n; TCs 3 and 4 are lossless, 6 carries the
// CNPs in strict priority, the rest share the port by deficit weighted round robin.

#include <array>
#include <cstdint>

namespace rocehil::testbed::lossless {

inline constexpr int classes = 8;
using DscpToTc = std::array<std::uint8_t, 64>;

// SONiC's default DSCP_TO_TC_MAP "AZURE" (sonic-buildimage files/build_templates/qos_config.j2):
// 3 -> 3, 4 -> 4, 5 -> 2, 8 -> 0, 46 -> 5, 48 -> 6, every other DSCP -> 1.
DscpToTc sonic_dscp_to_tc();

// WRED with ECN on one queue: below kmin nothing, from kmin to kmax a probability rising linearly
// to pmax, at kmax and above every packet. ECN-capable packets are marked CE, the others of a
// lossy queue dropped with the same probability (a lossless queue never drops).
struct Wred {
  bool ecn = true;
  std::uint32_t kmin_bytes = 0;
  std::uint32_t kmax_bytes = 0;
  double pmax = 0;  // 0..1
};

struct QueueProfile {
  bool lossless = false;     // PFC priority: never dropped by the queue; the ingress pauses instead
  bool strict = false;       // served before every DWRR queue (the CNP queue)
  std::uint32_t weight = 1;  // DWRR share among the non-strict queues
  Wred wred{};
  std::uint32_t limit_bytes = 0;  // a lossy queue tail-drops beyond it
};

struct PortProfile {
  std::array<QueueProfile, classes> queues{};
  // Per ingress port and lossless priority: over xoff the port sends XOFF upstream, under xon
  // XON; headroom is what it still takes after XOFF while the pause reaches the sender (the
  // cable and the sender's MTU in flight). Past xoff + headroom a lossless packet is dropped and
  // counted as a defect.
  std::uint32_t xoff_bytes = 0;
  std::uint32_t xon_bytes = 0;
  std::uint32_t headroom_bytes = 0;
};

// The RoCE profile of the SONiC RoCEv2 test plan, scaled to a port of `port_mbps`: lossless 3 and
// 4, strict 6, DWRR weights 14 (lossy) and 15 (lossless) as SONiC's default schedulers, WRED on
// the lossless queues from 1 ms to 4 ms of the port's time at 10% (at 1 Gbit/s: 125 KB to 500
// KB), XOFF at 2 ms of the port's time, XON 1 ms below, headroom 1 ms: a 100 Gbit/s switch holds
// microseconds, but the testbed's senders are processes on a shared 2-core machine, whose
// reaction times are milliseconds.
PortProfile sonic_roce_profile(int port_mbps);

}  // namespace rocehil::testbed::lossless
