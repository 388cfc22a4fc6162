#pragma once

// The packet codec of the soft provider. The soft provider sends RoCEv2 over ordinary UDP
// sockets: the kernel writes the IP and UDP headers, this codec writes and reads the UDP payload
// (BTH [+DETH] [+RETH | +AETH | +ImmDt] + payload + pad + ICRC).
//
// The ICRC is the one a real RNIC would compute for the packet as it appears on the wire, so
// tshark, scapy and a real RNIC accept it. That needs the IP and UDP headers the kernel will
// write. They are fully known: the soft provider's sockets set IP_PMTUDISC_DO and are
// unconnected, so Linux sends IPv4 with identification 0, flags DF and fragment offset 0, and
// the fields that vary on the way (TOS, TTL, checksums, IPv6 traffic class, flow label, hop
// limit) are masked by the ICRC rules anyway.
//
// Encoding and decoding allocate nothing and never throw; the payload is never copied, only
// read, so a sender can hand headers, payload and trailer to sendmsg as three iovecs.

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "rocehil/common/roce_wire.hpp"

struct sockaddr;

namespace rocehil::traffic::soft {

// The addresses and ports of a packet as they are on the wire: src is the sender. A receiver
// builds it from the peer's address (src) and its own (dst), or uses reversed() on the flow it
// sends with.
struct FlowAddress {
  bool ipv6 = false;
  std::array<std::uint8_t, 16> src{};  // IPv4: the first 4 bytes, the rest zero
  std::array<std::uint8_t, 16> dst{};
  std::uint16_t src_port = 0;  // host order
  std::uint16_t dst_port = wire::roce_v2_udp_port;

  FlowAddress reversed() const noexcept { return FlowAddress{ipv6, dst, src, dst_port, src_port}; }
  bool operator==(const FlowAddress&) const = default;
};

// A flow from IP address text (dotted quad or IPv6) and host-order ports. Both addresses must be
// of one family once IPv4-mapped IPv6 addresses (::ffff:a.b.c.d, which Linux sends as IPv4) are
// taken as IPv4. Unspecified addresses (0.0.0.0, ::) are refused: no packet carries them, and a
// wildcard-bound socket's own address would otherwise give every ICRC a wrong pseudo header.
std::optional<FlowAddress> make_flow(std::string_view src_ip, std::uint16_t src_port,
                                     std::string_view dst_ip, std::uint16_t dst_port) noexcept;
// The same from sockaddr_in / sockaddr_in6 (e.g. recvmsg's peer and IP_PKTINFO's local address),
// with the same rules. Other families give nothing.
std::optional<FlowAddress> make_flow(const sockaddr* src, const sockaddr* dst) noexcept;

// Base Transport Header. TVer is always 0.
struct Bth {
  std::uint8_t opcode = 0;
  bool solicited = false;
  bool migreq = false;
  bool fecn = false;
  bool becn = false;
  bool ack_request = false;
  std::uint8_t pad_count = 0;  // 2 bits: pad_for(payload length)
  std::uint16_t pkey = 0xffff;
  std::uint32_t dest_qp = 0;  // 24 bits
  std::uint32_t psn = 0;      // 24 bits
  bool operator==(const Bth&) const = default;
};

// Datagram Extended Transport Header, on UD packets.
struct Deth {
  std::uint32_t qkey = 0;
  std::uint32_t src_qp = 0;  // 24 bits
  bool operator==(const Deth&) const = default;
};

// RDMA Extended Transport Header, on WRITE_FIRST, WRITE_ONLY[_IMM] and READ_REQUEST.
struct Reth {
  std::uint64_t va = 0;
  std::uint32_t rkey = 0;
  std::uint32_t length = 0;  // DMA length of the whole message
  bool operator==(const Reth&) const = default;
};

// ACK Extended Transport Header, on ACKNOWLEDGE and READ_RESPONSE FIRST, LAST and ONLY.
struct Aeth {
  std::uint8_t syndrome = 0;
  std::uint32_t msn = 0;  // 24 bits
  bool operator==(const Aeth&) const = default;
};

// All headers a packet may carry; the opcode decides which are on the wire (wire::opcode::has_*,
// UD adds DETH). Fields of absent headers are ignored by encode and zero after decode.
struct PacketHeaders {
  Bth bth{};
  Deth deth{};
  Reth reth{};
  Aeth aeth{};
  std::uint32_t immdt = 0;  // immediate data, as the bytes on the wire read big-endian
  bool operator==(const PacketHeaders&) const = default;
};

inline constexpr std::size_t deth_size = 8;
// The largest headers_size(): RC WRITE_ONLY_IMM, BTH + RETH + ImmDt.
inline constexpr std::size_t max_headers_size = wire::bth_size + wire::reth_size + wire::immdt_size;
// Pad and ICRC after the payload.
inline constexpr std::size_t max_trailer_size = 3 + wire::icrc_size;

// The largest UDP payload the IP header can describe (16-bit IPv4 total length, IPv6 payload
// length; no jumbograms).
constexpr std::size_t max_udp_payload_size(bool ipv6) noexcept {
  return ipv6 ? 0xffff - wire::udp_header_size : 0xffff - 20 - wire::udp_header_size;
}

// The opcodes the soft provider speaks: RC 0x00-0x11 (no atomics), UD 0x64/0x65 and CNP 0x81.
bool is_supported_opcode(std::uint8_t opcode) noexcept;

// Bytes of BTH and extended headers for `opcode`; for CNP that includes its 16 reserved bytes.
// 0 for an unsupported opcode.
std::size_t headers_size(std::uint8_t opcode) noexcept;

// Pad bytes that bring a payload to a multiple of 4, the BTH PadCnt of a packet carrying it.
constexpr std::uint8_t pad_for(std::size_t payload_length) noexcept {
  return static_cast<std::uint8_t>((4 - payload_length % 4) % 4);
}

// Writes BTH and the extended headers the opcode calls for into `out`. Returns the bytes written
// (headers_size(opcode)), or 0 when the opcode is unsupported or `out` is too small.
std::size_t encode_headers(const PacketHeaders& headers, std::span<std::uint8_t> out) noexcept;

// The ICRC of the packet whose UDP payload is `headers` + `payload` + ICRC. `headers` starts with
// the BTH (what encode_headers wrote); `payload` is every byte between the headers and the ICRC,
// pad included. Returns 0 when `headers` is shorter than a BTH.
std::uint32_t compute_icrc(const FlowAddress& flow, std::span<const std::uint8_t> headers,
                           std::span<const std::uint8_t> payload) noexcept;

// For scatter-gather sends: writes the pad bytes (zero) and the ICRC that follow an unpadded
// `payload` into `out` (max_trailer_size is always enough). Returns the bytes written, or 0 when
// `out` is too small, `headers` holds no BTH, the BTH PadCnt is not pad_for(payload.size()), or
// the packet is too large for the IP header.
std::size_t encode_trailer(const FlowAddress& flow, std::span<const std::uint8_t> headers,
                           std::span<const std::uint8_t> payload,
                           std::span<std::uint8_t> out) noexcept;

// For contiguous sends: `packet` holds encoded headers of `headers_length` bytes followed by a
// payload of `payload_length` bytes; appends pad and ICRC in place. Returns the UDP payload
// length, or 0 when `packet` is too small or encode_trailer would refuse.
std::size_t finish_packet(const FlowAddress& flow, std::span<std::uint8_t> packet,
                          std::size_t headers_length, std::size_t payload_length) noexcept;

enum class DecodeError : std::uint8_t {
  none,
  too_short,              // shorter than BTH + ICRC, or than the opcode's headers + ICRC
  bad_transport_version,  // BTH TVer other than 0
  bad_icrc,
  bad_padding,  // PadCnt larger than the payload, or a payload not a multiple of 4 bytes
  unsupported_opcode,
};
std::string_view decode_error_name(DecodeError error) noexcept;

struct DecodedPacket {
  PacketHeaders headers;
  std::span<const std::uint8_t> payload;  // inside the decoded bytes, pad removed
};

// Decodes one UDP payload received on `as_received` (src: the sender). The ICRC is checked
// first, so any corruption outside the masked fields reads as bad_icrc whatever it hit. `out` is
// written only on success; its payload points into `udp_payload`.
DecodeError decode_packet(const FlowAddress& as_received, std::span<const std::uint8_t> udp_payload,
                          DecodedPacket& out) noexcept;

}  // namespace rocehil::traffic::soft
