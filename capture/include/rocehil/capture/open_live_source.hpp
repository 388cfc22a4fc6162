#pragma once

// Opening a live capture by backend name, as `rocehil capture` and the agent's capture tasks do,
// so both check the same combinations and say the same things.

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "rocehil/capture/live_source.hpp"
#include "rocehil/capture/pcap_source.hpp"

namespace rocehil::capture {

struct LiveSourceSpec {
  std::string backend = "pcap";  // pcap | dpdk
  std::string iface;             // pcap: the interface; dpdk: the port name (optional)
  std::string dpdk_args;         // dpdk: the EAL arguments
  CaptureFilter filter = CaptureFilter::all;
  std::uint32_t snaplen = 128;
  std::uint32_t buffer_mb = 64;  // pcap's kernel ring
  bool outbound_too = false;     // pcap: also frames this host sends
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
