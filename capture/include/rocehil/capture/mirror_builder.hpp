#pragma once

// Wraps a frame as a switch's remote mirror session sends it: Ethernet, IPv4 or IPv6, GRE, then
// ERSPAN I, II or III or transparent Ethernet bridging (the layouts frames/mirror_layout.hpp
// reads). For sample captures, tests and the analyzer's bench; building into a caller's buffer
// allocates nothing.

#include <cstdint>
#include <span>
#include <vector>

#include "rocehil/capture/decode.hpp"
#include "rocehil/capture/frame_builder.hpp"

namespace rocehil::capture {

struct MirrorWrap {
  MirrorKind kind = MirrorKind::erspan2;
  MacAddress dst_mac{0x02, 0, 0, 0, 0, 0xc0};  // the collector's
  MacAddress src_mac{0x02, 0, 0, 0, 0, 0x5e};  // the switch's
  // An IPv6 source makes the outer header IPv6 (the destination must be IPv6 too).
  IpAddress src = IpAddress::v4(std::array<std::uint8_t, 4>{198, 19, 1, 201}.data());
  IpAddress dst = IpAddress::v4(std::array<std::uint8_t, 4>{198, 19, 0, 2}.data());
  std::uint8_t ttl = 64;
  // GRE: a sequence number (always with ERSPAN II, never with ERSPAN I), a key.
  bool with_sequence = true;
  std::uint32_t sequence = 0;
  bool with_key = false;
  std::uint32_t key = 0;
  // ERSPAN II and III
  std::uint16_t session_id = 1;  // 10 bits
  std::uint16_t vlan = 0;        // 12 bits
  std::uint8_t cos = 0;
  bool truncated = false;        // T
  std::uint32_t port_index = 0;  // II: 20 bits; III: in a subheader ID 1 or 3
  // ERSPAN III
  std::uint32_t timestamp = 0;
  TimestampGranularity granularity = TimestampGranularity::ns100;
  bool egress = false;
  std::uint8_t platform_id = 0;  // 0: no subheader; 1 or 3: with one (3 carries `seconds`)
  std::uint32_t seconds = 0;
  // Bytes of the frame carried: all of them (0), or the first `cut_to` (a truncating session;
  // set `truncated` too, as a switch does).
  std::uint32_t cut_to = 0;
};

// Bytes the tunnel headers take before the mirrored frame.
std::size_t mirror_overhead(const MirrorWrap& w) noexcept;

// Writes the wrapped frame into `out` and returns its size, 0 if `out` is too small.
std::size_t wrap_mirror(const MirrorWrap& w, std::span<const std::uint8_t> frame,
                        std::span<std::uint8_t> out) noexcept;
std::vector<std::uint8_t> wrap_mirror(const MirrorWrap& w, std::span<const std::uint8_t> frame);

}  // namespace rocehil::capture
