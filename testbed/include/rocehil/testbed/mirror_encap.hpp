#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "rocehil/testbed/options.hpp"

namespace rocehil::testbed {

// The headers a remote mirror puts in front of each copied frame, inside the IPv4 packet (the
// kernel writes the IPv4 header: protocol 47). Pure functions on bytes, all fields in network
// order, after the ERSPAN draft (draft-foschiano-erspan-03) and RFC 1701/2890 for GRE:
//
//   erspan (type III): GRE, flags S, protocol 0x22EB, sequence (8 bytes); then
//     Ver 2 (4) | VLAN 0 (12) | COS (3) | BSO 0 (2) | T (1) | Session ID (10)
//     Timestamp (32): the nanoseconds of the receive time
//     SGT 0 (16) | P 1 (1) | FT 0 (5) | HW ID 0 (6) | D (1) | Gra 0b10 (2) | O 1 (1)
//     platform subheader: Platf ID 0x3 (6) | reserved (12) | Port ID/Index (14)
//                         Timestamp seconds (32)                            (28 bytes in all)
//   erspan2 (type II): GRE, flags S, protocol 0x88BE, sequence (8 bytes); then
//     Ver 1 (4) | VLAN 0 (12) | COS (3) | En 0 (2) | T (1) | Session ID (10)
//     Reserved 0 (12) | Index (20)                                          (16 bytes in all)
//   gre: GRE, flags K and S, protocol 0x6558 (transparent Ethernet bridging), key = session,
//     sequence                                                              (12 bytes in all)

// What the headers say about one copy.
struct MirroredFrame {
  std::uint32_t sequence = 0;    // GRE sequence number: counts up from 0 per session
  bool truncated = false;        // ERSPAN T: the copy is shorter than the frame was
  std::uint32_t port_index = 0;  // ifindex of the mirrored port; 0 when it cannot be told
  bool egress = false;           // ERSPAN III D: the port sent the frame (false: received)
  std::uint8_t cos = 0;          // 0-7, frame_cos()
  // When the switch received the copy, CLOCK_REALTIME (ERSPAN III, IEEE 1588 granularity).
  std::uint32_t seconds = 0;
  std::uint32_t nanoseconds = 0;
};

// ERSPAN's session ID is 10 bits; a GRE key carries the same number.
inline constexpr int max_mirror_session = 1023;
inline constexpr std::size_t max_encap_header_bytes = 28;
inline constexpr std::size_t ipv4_header_bytes = 20;  // the kernel's, without options

// 28, 16 or 12 bytes; 0 for a local mirror.
std::size_t encap_header_bytes(MirrorMode mode);

// Writes the headers for `frame` of `session` (0 to max_mirror_session) into `out`, which holds
// at least encap_header_bytes(mode); returns how many bytes it wrote. Fields wider than theirs
// (a port index past 14 or 20 bits) keep their low bits.
std::size_t write_encap_header(MirrorMode mode, int session, const MirroredFrame& frame,
                               std::span<std::uint8_t> out);

// How many bytes of each frame one packet carries: what fits in an IPv4 packet of `mtu` bytes
// after the headers, and no more than `truncate` when that is not 0.
std::size_t frame_bytes_kept(MirrorMode mode, int mtu, int truncate);

// The class of service a switch puts in ERSPAN's COS: the 802.1Q priority of a tagged frame,
// else the IP precedence (top 3 bits of the IPv4 TOS or IPv6 traffic class), else 0. RoCEv2 with
// DSCP 26 is 3, CNPs with DSCP 48 are 6.
std::uint8_t frame_cos(std::span<const std::uint8_t> frame);

}  // namespace rocehil::testbed
