#pragma once

// Opening a live capture by backend name, as `rocehil capture` and the agent's capture tasks do,
// so both check the same combinations and say the same things.

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "rocehil/capture/decode.hpp"
#include "rocehil/capture/live_source.hpp"
#include "rocehil/capture/pcap_source.hpp"

namespace rocehil::capture {

// A capture point fed by a remote mirror: the one session it takes among the GRE/ERSPAN packets
// reaching its interface. ERSPAN II/III match on their session ID, GRE TEB on its key; ERSPAN I
// and key-less GRE TEB carry neither and are taken by source address alone.
struct RemoteSessionSpec {
  std::uint32_t session = 0;
  std::optional<IpAddress> source;  // the switch's tunnel source; unset: any switch
};

// Room for a remote mirror's tunnel headers in front of the mirrored frame: outer Ethernet and
// a VLAN tag, IPv6, GRE with checksum, key and sequence, ERSPAN III with its subheader (100).
inline constexpr std::uint32_t max_mirror_overhead = 104;

struct LiveSourceSpec {
  std::string backend = "pcap";  // pcap | dpdk
  std::string iface;             // pcap: the interface; dpdk: the port name (optional)
  std::string dpdk_args;         // dpdk: the EAL arguments
  CaptureFilter filter = CaptureFilter::all;
  std::uint32_t snaplen = 128;
  std::uint32_t buffer_mb = 64;  // pcap's kernel ring
  bool outbound_too = false;     // pcap: also frames this host sends
  // Set: the frames are a remote mirror session's. The kernel keeps GRE packets only, snapped at
  // snaplen + max_mirror_overhead; the session is picked, and `filter` applied to the mirrored
  // frame inside the tunnel, in this process. The frames delivered (and written) are the tunnel
  // packets, whole.
  std::optional<RemoteSessionSpec> remote;
};

// Throws rocehil::Error naming the option: a backend without what it needs, a filter the dpdk
// backend cannot apply, or whatever the backend itself refuses.
std::unique_ptr<LiveSource> open_live_source(const LiveSourceSpec& spec);

// `workers` sources on one capture point, one per worker thread, each receiving a share of
// the frames with every frame of a flow in the same share: pcap sockets in one PACKET_FANOUT
// group. One worker is open_live_source. Throws as open_live_source does, and for a backend
// that cannot spread frames yet (dpdk).
std::vector<std::unique_ptr<LiveSource>> open_live_sources(const LiveSourceSpec& spec,
                                                           unsigned workers);

// The link speed that turns pause quanta into time: the one given, else the one the interface
// reports, else 100 Gb/s (the analysis states which in its options).
double pause_link_gbps(const LiveSource& source, std::optional<double> given);

}  // namespace rocehil::capture
