#pragma once

// RoCEv2, PFC and PAUSE wire constants from the public specs (IBTA Vol 1 and Annex A17,
// IEEE 802.1Qbb, 802.3 Annex 31B). The capture decoders and the soft provider both read these,
// so the two sides of the wire agree by construction.

#include <cstddef>
#include <cstdint>

namespace rocehil::wire {

inline constexpr std::uint16_t roce_v2_udp_port = 4791;

inline constexpr std::size_t ethernet_header_size = 14;
inline constexpr std::size_t vlan_tag_size = 4;
inline constexpr std::size_t udp_header_size = 8;
inline constexpr std::size_t bth_size = 12;
inline constexpr std::size_t reth_size = 16;
inline constexpr std::size_t aeth_size = 4;
inline constexpr std::size_t immdt_size = 4;
inline constexpr std::size_t icrc_size = 4;
inline constexpr std::size_t cnp_reserved_size = 16;

namespace ethertype {
inline constexpr std::uint16_t ipv4 = 0x0800;
inline constexpr std::uint16_t ipv6 = 0x86dd;
inline constexpr std::uint16_t vlan = 0x8100;      // 802.1Q C-tag
inline constexpr std::uint16_t qinq = 0x88a8;      // 802.1ad S-tag
inline constexpr std::uint16_t qinq_old = 0x9100;  // pre-standard S-tag still seen on switches
inline constexpr std::uint16_t mac_control = 0x8808;
}  // namespace ethertype

namespace mac_control {
inline constexpr std::uint16_t pause = 0x0001;  // 802.3x: one quanta for the whole link
inline constexpr std::uint16_t pfc = 0x0101;    // 802.1Qbb: per-priority quanta
inline constexpr std::size_t pfc_payload_size = 2 + 2 + 8 * 2;  // opcode, class vector, 8 quanta
inline constexpr std::size_t pause_payload_size = 2 + 2;        // opcode, quanta
// One pause quantum is 512 bit times of the link it is sent on.
inline constexpr double bit_times_per_quantum = 512.0;
}  // namespace mac_control

namespace ip_proto {
inline constexpr std::uint8_t udp = 17;
inline constexpr std::uint8_t gre = 47;  // remote mirrors: ERSPAN, GRE TEB
inline constexpr std::uint8_t ipv6_hop_by_hop = 0;
inline constexpr std::uint8_t ipv6_routing = 43;
inline constexpr std::uint8_t ipv6_fragment = 44;
inline constexpr std::uint8_t ipv6_dest_options = 60;
}  // namespace ip_proto

inline constexpr std::uint8_t ecn_ce = 0b11;

// BTH opcodes: the top 3 bits name the transport (RC 000, UC 001, RD 010, UD 011, CNP 100).
namespace opcode {
inline constexpr std::uint8_t rc_send_first = 0x00;
inline constexpr std::uint8_t rc_send_middle = 0x01;
inline constexpr std::uint8_t rc_send_last = 0x02;
inline constexpr std::uint8_t rc_send_last_imm = 0x03;
inline constexpr std::uint8_t rc_send_only = 0x04;
inline constexpr std::uint8_t rc_send_only_imm = 0x05;
inline constexpr std::uint8_t rc_write_first = 0x06;
inline constexpr std::uint8_t rc_write_middle = 0x07;
inline constexpr std::uint8_t rc_write_last = 0x08;
inline constexpr std::uint8_t rc_write_last_imm = 0x09;
inline constexpr std::uint8_t rc_write_only = 0x0a;
inline constexpr std::uint8_t rc_write_only_imm = 0x0b;
inline constexpr std::uint8_t rc_read_request = 0x0c;
inline constexpr std::uint8_t rc_read_response_first = 0x0d;
inline constexpr std::uint8_t rc_read_response_middle = 0x0e;
inline constexpr std::uint8_t rc_read_response_last = 0x0f;
inline constexpr std::uint8_t rc_read_response_only = 0x10;
inline constexpr std::uint8_t rc_acknowledge = 0x11;
inline constexpr std::uint8_t ud_send_only = 0x64;
inline constexpr std::uint8_t ud_send_only_imm = 0x65;
inline constexpr std::uint8_t cnp = 0x81;

// The operation within a transport: the low 5 bits.
constexpr std::uint8_t operation(std::uint8_t op) {
  return op & 0x1f;
}
constexpr std::uint8_t transport(std::uint8_t op) {
  return op >> 5;
}
inline constexpr std::uint8_t transport_rc = 0;
inline constexpr std::uint8_t transport_uc = 1;
inline constexpr std::uint8_t transport_rd = 2;
inline constexpr std::uint8_t transport_ud = 3;

// Extended headers that follow the BTH, by operation (same table for RC and UC; RD and UD add
// their own RDETH/DETH first, which the decoder skips by size).
constexpr bool has_reth(std::uint8_t op) {
  const std::uint8_t o = operation(op);
  return o == 0x06 || o == 0x0a || o == 0x0b || o == 0x0c;
}
constexpr bool has_immdt(std::uint8_t op) {
  const std::uint8_t o = operation(op);
  return o == 0x03 || o == 0x05 || o == 0x09 || o == 0x0b;
}
constexpr bool has_aeth(std::uint8_t op) {
  const std::uint8_t o = operation(op);
  return o == 0x0d || o == 0x0f || o == 0x10 || o == 0x11;
}
// Requests consume the requester's PSN space: SEND and WRITE packets and READ REQUEST.
constexpr bool is_request(std::uint8_t op) {
  const std::uint8_t o = operation(op);
  return op != cnp && o <= 0x0c;
}
}  // namespace opcode

// AETH syndrome ranges (IBTA 9.7.5.2.2).
namespace aeth {
constexpr bool is_ack(std::uint8_t syndrome) {
  return (syndrome & 0xe0) == 0x00;
}
constexpr bool is_rnr_nak(std::uint8_t syndrome) {
  return (syndrome & 0xe0) == 0x20;
}
constexpr bool is_nak(std::uint8_t syndrome) {
  return (syndrome & 0xe0) == 0x60;
}
inline constexpr std::uint8_t nak_psn_sequence_error = 0x60;
inline constexpr std::uint8_t nak_invalid_request = 0x61;
inline constexpr std::uint8_t nak_remote_access_error = 0x62;
inline constexpr std::uint8_t nak_remote_operational_error = 0x63;
}  // namespace aeth

// PSNs are 24-bit and wrap; the distance from `from` to `to` as a signed 24-bit number.
constexpr std::int32_t psn_distance(std::uint32_t from, std::uint32_t to) {
  const std::uint32_t d = (to - from) & 0xffffffu;
  return d >= 0x800000u ? static_cast<std::int32_t>(d) - 0x1000000 : static_cast<std::int32_t>(d);
}

// `psn` moved by `n` in the 24-bit PSN space (n = 0xffffff steps back by one).
constexpr std::uint32_t psn_add(std::uint32_t psn, std::uint32_t n) {
  return (psn + n) & 0xffffffu;
}

// Packets a message of `length` bytes takes at `mtu`; a zero-length message still takes one.
constexpr std::uint32_t packets_for_length(std::uint64_t length, std::uint32_t mtu) {
  return length == 0 ? 1 : static_cast<std::uint32_t>((length + mtu - 1) / mtu);
}

}  // namespace rocehil::wire
