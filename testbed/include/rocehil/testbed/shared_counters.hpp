#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace rocehil::testbed::dataplane {

// A lossless switch's counters (`testbed up --lossless`), as its forwarding process keeps them:
// in a file that the process maps read-write and counts into as it forwards, and that anything
// else (the switch's snmpd handler, `testbed status`) maps read-only and copies. No request
// protocol: a reading is always fresh, and an idle switch costs nothing. The writer's side, the
// file's layout, is src/dataplane/shared_counters.hpp; this is the readers' side, plain numbers.

// One egress queue (traffic class) of a port.
struct QueueSnapshot {
  std::uint64_t packets = 0;  // sent
  std::uint64_t bytes = 0;    // sent
  std::uint64_t dropped = 0;  // tail drops and WRED drops of non-ECN-capable packets
  std::uint64_t dropped_bytes = 0;
  std::uint64_t ecn_marked = 0;  // CE set by WRED
  std::uint64_t depth_bytes = 0;
  std::uint64_t peak_depth_bytes = 0;
};

// One priority of a port, PFC's view of it.
struct PrioritySnapshot {
  std::uint64_t pfc_sent = 0;      // XOFF frames (quanta > 0) sent out of the port
  std::uint64_t pfc_received = 0;  // XOFF frames received on it
  std::uint64_t xon_sent = 0;      // quanta 0
  std::uint64_t xon_received = 0;
  std::uint64_t paused_ns = 0;      // time the port's egress queue of the priority was held by PFC
  std::uint64_t ingress_bytes = 0;  // bytes that came in on the port, held in the switch now
  std::uint64_t peak_ingress_bytes = 0;
  std::uint64_t lossless_drops = 0;   // a lossless packet dropped past XOFF + headroom: a defect
  std::uint64_t storms_detected = 0;  // the PFC watchdog
  std::uint64_t storms_restored = 0;
  std::uint64_t storm_drops = 0;
};

// ECN-capable packets by sixteenth of WRED's ramp (Kmin to Kmax) at their arrival, and those
// marked.
struct WredSnapshot {
  std::array<std::uint64_t, 16> seen{}, marked{};
};

struct PortSnapshot {
  std::string ifname;
  std::uint64_t ifindex = 0;  // in the switch's namespace; 0 when the writer did not know it
  std::uint64_t rx_packets = 0;
  std::uint64_t rx_bytes = 0;
  std::uint64_t forwarded = 0;
  std::uint64_t no_route = 0;                  // dropped: no route to the destination
  std::uint64_t unresolved = 0;                // dropped: the next hop's MAC address is not known
  std::uint64_t ttl_expired = 0;               // dropped: TTL 1 or 0
  std::array<QueueSnapshot, 8> queue{};        // by traffic class 0-7
  std::array<PrioritySnapshot, 8> priority{};  // by priority 0-7
  std::array<WredSnapshot, 8> wred{};          // by traffic class 0-7
  std::uint64_t socket_drops =
      0;  // dropped by the kernel: the port's socket full, the process away
};

// A switch's counters summed over its ports (and queues, priorities): what `testbed status`
// shows of it in one line.
struct SwitchTotals {
  std::uint64_t forwarded = 0;
  std::uint64_t pfc_sent = 0;  // XOFF frames
  std::uint64_t pfc_received = 0;
  std::uint64_t ecn_marked = 0;
  std::uint64_t queue_drops = 0;       // the egress queues' drops, every class
  std::uint64_t forwarding_drops = 0;  // no route, next hop unresolved, TTL expired
  std::uint64_t socket_drops = 0;      // the kernel's, before the process read them
  std::uint64_t lossless_drops = 0;    // a defect: a lossless class dropped
  std::uint64_t storms_detected = 0;   // the PFC watchdog
  std::uint64_t storm_drops = 0;
};
SwitchTotals totals(const std::vector<PortSnapshot>& ports);

// Where the switch of namespace `netns` (rocehil-<id>-<name>) keeps its counters:
// TestbedPaths::public_run_dir()/<netns>.counters. Not under the testbed's --dir: the switch's
// snmpd handler, which reads it, knows only the namespace; and `testbed down` removes every
// file of the testbed there.
std::string shared_counters_path(std::string_view netns);

// Every port's counters, in the order the writer was given them. Throws rocehil::Error
// (infrastructure) naming `path` when the file is missing, shorter than its header says, or its
// header (magic, layout version, sizes) is not this build's.
std::vector<PortSnapshot> read_shared_counters(const std::string& path);

}  // namespace rocehil::testbed::dataplane
