#pragma once

// Builds wire-correct Ethernet frames: RoCEv2 (IPv4 or IPv6, any 802.1Q/802.1ad tags, BTH and
// extended headers, payload, ICRC), PFC and 802.3x PAUSE. Used to make sample captures, test
// frames and, later, the PFC injector's frames. Building into a caller's buffer allocates nothing.

#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "rocehil/capture/decode.hpp"

namespace rocehil::capture {

using MacAddress = std::array<std::uint8_t, 6>;

// Fields of a RoCEv2 frame. Defaults make a valid RC WRITE_ONLY from 198.18.0.1 to 198.18.0.2.
struct RoceFrame {
  MacAddress dst_mac{0x02, 0, 0, 0, 0, 0x02};
  MacAddress src_mac{0x02, 0, 0, 0, 0, 0x01};
  // Tags outermost first: {tpid, tci}. tpid 0x88a8 (802.1ad) or 0x8100 (802.1Q).
  std::vector<std::pair<std::uint16_t, std::uint16_t>> vlans;
  IpAddress src = IpAddress::v4(std::array<std::uint8_t, 4>{198, 18, 0, 1}.data());
  IpAddress dst = IpAddress::v4(std::array<std::uint8_t, 4>{198, 18, 0, 2}.data());
  std::uint8_t dscp = 26;
  std::uint8_t ecn = 0b10;  // ECT(0), as RoCE NICs send
  std::uint8_t ttl = 64;
  std::uint16_t udp_src_port = 49152;
  Bth bth{.opcode = 0x0a, .dest_qp = 0x101, .psn = 0};
  std::uint32_t payload_size = 0;  // bytes after the headers, before the ICRC
  std::uint8_t payload_fill = 0;
  // Extended headers are written when the opcode calls for them; these give their contents.
  Reth reth{.va = 0x10000, .rkey = 0x1234, .dma_length = 0};
  Aeth aeth{};
  std::uint32_t immdt = 0;
};

// Size the frame will have (without FCS).
std::size_t frame_size(const RoceFrame& f) noexcept;
// Writes the frame into `out` (at least frame_size(f) bytes) and returns its size, 0 if too small.
std::size_t build(const RoceFrame& f, std::span<std::uint8_t> out) noexcept;
std::vector<std::uint8_t> build(const RoceFrame& f);

// A CNP for `dest_qp` (BTH opcode 0x81, BECN set, 16 reserved bytes), DSCP 48 by default.
RoceFrame cnp_frame(const IpAddress& src, const IpAddress& dst, std::uint32_t dest_qp);

// 802.1Qbb PFC: class-enable vector and eight quanta; 64-byte minimum frame, zero padded.
std::vector<std::uint8_t> build_pfc(std::uint16_t class_enable,
                                    const std::array<std::uint16_t, 8>& quanta,
                                    const MacAddress& src_mac = {0x02, 0, 0, 0, 0, 0x10});
// 802.3x PAUSE with one quanta for the whole link.
std::vector<std::uint8_t> build_pause(std::uint16_t quanta,
                                      const MacAddress& src_mac = {0x02, 0, 0, 0, 0, 0x10});

}  // namespace rocehil::capture
