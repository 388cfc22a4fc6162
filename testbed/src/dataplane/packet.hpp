#pragma once

// The frames a lossless switch reads and rewrites: IPv4 to forward (TTL, CE mark, the flow's
// ECMP hash), ARP to learn and ask its neighbours' addresses, PFC and PAUSE to send and obey.
// Pure and allocation-free: every function works on the caller's bytes, per packet.

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

namespace rocehil::testbed::dataplane {

using Mac = std::array<std::uint8_t, 6>;

inline constexpr std::uint16_t ethertype_ipv4 = 0x0800;
inline constexpr std::uint16_t ethertype_arp = 0x0806;
inline constexpr std::uint16_t ethertype_mac_control = 0x8808;
inline constexpr std::size_t ethernet_header = 14;
inline constexpr std::size_t min_frame = 60;  // without the FCS, as a packet socket sends it

std::uint16_t ethertype(std::span<const std::uint8_t> frame);  // 0 when shorter than a header

// An IPv4 packet in an Ethernet frame; addresses in host byte order. Ports are the UDP or TCP
// ports of a first fragment, 0 otherwise.
struct Ipv4 {
  std::uint32_t source = 0, destination = 0;
  std::uint8_t protocol = 0, ttl = 0, dscp = 0, ecn = 0;
  std::uint16_t source_port = 0, destination_port = 0;
};
// nullopt when the frame is not a whole IPv4 header (version 4, IHL >= 5, total length in frame).
std::optional<Ipv4> parse_ipv4(std::span<const std::uint8_t> frame);

// The header checksum kept right by RFC 1624's incremental update.
void decrement_ttl(std::span<std::uint8_t> frame);
void mark_ce(std::span<std::uint8_t> frame);  // ECN field to 11

// ECMP's flow hash over addresses, protocol and ports with `seed` (the testbed's --ecmp-seed):
// every packet of a flow (a QP's UDP source port) takes the same path.
std::uint32_t flow_hash(const Ipv4& packet, std::uint32_t seed);

void set_macs(std::span<std::uint8_t> frame, const Mac& destination, const Mac& source);
Mac source_mac(std::span<const std::uint8_t> frame);

// 802.1Qbb PFC (opcode 0x0101: a class-enable vector and eight quanta) or 802.3x PAUSE (0x0001:
// one quanta for every priority, enable read as 0xff).
struct PauseFrame {
  bool priority_flow_control = true;
  std::uint8_t enable = 0;
  std::array<std::uint16_t, 8> quanta{};
};
std::optional<PauseFrame> parse_pause(std::span<const std::uint8_t> frame);
// A PFC frame from `source` to 01:80:C2:00:00:01, padded to 60 bytes; returns its length.
std::size_t build_pfc(std::span<std::uint8_t, min_frame> out, const Mac& source,
                      std::uint8_t enable, const std::array<std::uint16_t, 8>& quanta);

struct Arp {
  std::uint16_t operation = 0;  // 1 request, 2 reply
  Mac sender_mac{};
  std::uint32_t sender_address = 0, target_address = 0;
};
std::optional<Arp> parse_arp(std::span<const std::uint8_t> frame);
// A broadcast who-has `target` from `source_mac`/`source_address`; returns its length.
std::size_t build_arp_request(std::span<std::uint8_t, min_frame> out, const Mac& source_mac,
                              std::uint32_t source_address, std::uint32_t target);

}  // namespace rocehil::testbed::dataplane
