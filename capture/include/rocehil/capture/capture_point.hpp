#pragma once

// What a live capture knows about where it listens and what it missed. Written into pcapng
// files (interface description and statistics blocks) and into the capture summary.

#include <cstdint>
#include <string>

namespace rocehil::capture {

struct InterfaceInfo {
  std::string name;             // if_name: "eth3", "0000:3b:00.0", "net_af_packet0"
  std::string description;      // if_description: e.g. "pcap" or "dpdk net_af_packet"
  std::string bpf_filter;       // if_filter: the libpcap filter expression, empty for none
  std::uint64_t speed_bps = 0;  // if_speed; 0 when the interface does not report one (veth)
};

struct CaptureCounters {
  std::uint64_t captured = 0;  // frames delivered through next_batch
  // Frames the capture path lost, as the kernel or the NIC counts them:
  std::uint64_t dropped_buffer = 0;     // no room in the capture buffer (pcap_stats ps_drop,
                                        // rte_eth_stats imissed + rx_nombuf)
  std::uint64_t dropped_interface = 0;  // dropped or in error at the interface (ps_ifdrop,
                                        // rte_eth_stats ierrors)
  // Frames the kernel gave to another worker's socket because this one's ring was nearly full
  // (net_af_packet's PACKET_FANOUT_FLAG_ROLLOVER): captured, but their flows were split over
  // workers, so those flows' PSN judgements may count gaps that were not there.
  std::uint64_t moved = 0;
  // Frames a remote mirror session lost on the way from the switch, by its GRE sequence numbers
  // (known once the capture is analysed; 0 for a local mirror port).
  std::uint64_t lost_upstream = 0;
  // Set by a source that takes one remote session out of what reaches it: it counted
  // lost_upstream itself, over all of the session's frames, before any filter left some out.
  bool upstream_counted = false;
  std::uint64_t dropped() const noexcept { return dropped_buffer + dropped_interface; }
  // captured / (captured + dropped + lost_upstream); 1 when nothing arrived at all.
  double coverage() const noexcept {
    const std::uint64_t total = captured + dropped() + lost_upstream;
    return total == 0 ? 1.0 : static_cast<double>(captured) / static_cast<double>(total);
  }
};

}  // namespace rocehil::capture
