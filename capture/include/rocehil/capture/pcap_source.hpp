#pragma once

// Live capture from a Linux interface through libpcap (TPACKET_V3 ring, nanosecond timestamps).

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "rocehil/capture/live_source.hpp"

namespace rocehil::capture {

// Which frames a capture keeps, compiled to a BPF filter so the kernel discards the rest.
enum class CaptureFilter {
  all,      // everything on the wire
  roce,     // RoCEv2 (UDP destination port 4791) and MAC control frames (PFC, PAUSE)
  cnp_pfc,  // only CNPs (BTH opcode 0x81) and MAC control frames
};
const char* to_string(CaptureFilter filter) noexcept;
// The filter named "all", "roce" or "cnp-pfc"; nullopt for any other name.
std::optional<CaptureFilter> capture_filter_from(std::string_view name) noexcept;
// The BPF expression for `filter` (tcpdump syntax); frames with up to two VLAN tags match too.
std::string bpf_expression(CaptureFilter filter);
// The kernel's share of a remote mirror capture: GRE packets over IPv4 or IPv6, tagged or not.
std::string remote_mirror_bpf_expression();

struct PcapSourceOptions {
  std::string iface;
  std::uint32_t snaplen = 128;  // headers only: Ethernet + 2 tags + IPv6 + UDP + BTH + RETH fit
  CaptureFilter filter = CaptureFilter::all;
  // Keep GRE packets only (remote_mirror_bpf_expression), instead of `filter`.
  bool remote_mirrors = false;
  // The kernel ring. Large, with immediate mode off, so bursts at line rate are absorbed and
  // frames are handed over a block at a time.
  std::uint32_t buffer_bytes = 64u << 20;
  // How long a partly filled block waits before it is handed over: bounds the delay of a
  // trickle of frames and how long stop() takes.
  std::uint32_t block_timeout_ms = 100;
  // A mirror port only receives; frames this host sends out of it (IPv6 neighbour discovery and
  // the like) are not part of what the switch mirrored, so by default they are not captured.
  bool outbound_too = false;
  // Nonzero: this socket joins the PACKET_FANOUT group of that id on the interface, and the
  // kernel hands each frame to one socket of the group by its flow hash (PACKET_FANOUT_HASH over
  // the addresses and ports), so a flow stays on one socket: one socket per worker thread.
  std::uint16_t fanout_group = 0;
};

class PcapSource final : public LiveSource {
 public:
  // Throws rocehil::Error with the interface and libpcap's reason (no such device, not root,
  // a filter that does not compile).
  static std::unique_ptr<PcapSource> open(const PcapSourceOptions& options);
  ~PcapSource() override;
  PcapSource(const PcapSource&) = delete;
  PcapSource& operator=(const PcapSource&) = delete;

  std::size_t next_batch(std::span<Frame> out) override;
  void stop() noexcept override;
  CaptureCounters counters() override;
  const InterfaceInfo& interface_info() const noexcept override;

  struct Impl;

 private:
  explicit PcapSource(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace rocehil::capture
