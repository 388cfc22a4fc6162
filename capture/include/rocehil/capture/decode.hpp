#pragma once

// Pure decoders: bytes in, facts out. No I/O, no allocation, no exceptions; a frame that is cut
// short decodes as far as its bytes allow and says so in `kind`.

#include <array>
#include <cstdint>
#include <string>

namespace rocehil::capture {

// An IPv4 address is stored IPv4-mapped (::ffff:a.b.c.d) so one key type covers both families.
struct IpAddress {
  std::array<std::uint8_t, 16> bytes{};
  bool operator==(const IpAddress&) const = default;
  bool is_v4() const noexcept;
  std::string to_string() const;
  // Writes the text form (dotted quad, or RFC 5952 for IPv6) at `out`, which has room for
  // max_text_size characters, and returns its end. For output loops: no allocation.
  static constexpr std::size_t max_text_size = 40;
  char* format_to(char* out) const noexcept;
  static IpAddress v4(const std::uint8_t* four_bytes) noexcept;
  static IpAddress v6(const std::uint8_t* sixteen_bytes) noexcept;
};

enum class FrameKind : std::uint8_t {
  other,           // anything that is not one of the below (ARP, TCP, UDP to other ports, ...)
  roce,            // UDP dst 4791 with a complete 12-byte BTH in the captured bytes
  roce_malformed,  // UDP dst 4791 whose BTH is short (UDP length) or cut by the snap length
  pfc,             // MAC control 0x8808 opcode 0x0101 with all 8 quanta captured
  pause,           // MAC control 0x8808 opcode 0x0001 with its quanta captured
  mac_control_malformed,  // MAC control frame of either opcode cut before its fields end
};

struct Bth {
  std::uint8_t opcode = 0;
  bool solicited = false;
  bool migreq = false;
  std::uint8_t pad_count = 0;
  std::uint8_t tver = 0;
  std::uint16_t pkey = 0;
  bool fecn = false;
  bool becn = false;
  std::uint32_t dest_qp = 0;  // 24 bits
  bool ack_req = false;
  std::uint32_t psn = 0;  // 24 bits
};

struct Reth {
  std::uint64_t va = 0;
  std::uint32_t rkey = 0;
  std::uint32_t dma_length = 0;
};

struct Aeth {
  std::uint8_t syndrome = 0;
  std::uint32_t msn = 0;  // 24 bits
};

struct DecodedFrame {
  FrameKind kind = FrameKind::other;

  // Layer 2: number of 802.1Q / 802.1ad tags and the innermost VLAN id.
  std::uint8_t vlan_tags = 0;
  std::uint16_t vlan_id = 0;

  // Layer 3, valid when ip_version is 4 or 6.
  std::uint8_t ip_version = 0;
  std::uint8_t dscp = 0;
  std::uint8_t ecn = 0;
  IpAddress src;
  IpAddress dst;

  // Layer 4, valid for roce and roce_malformed.
  std::uint16_t udp_src_port = 0;
  std::uint16_t udp_length = 0;

  // RoCE transport headers, valid for roce. An extended header is marked present only when the
  // opcode calls for it and all of its bytes were captured.
  Bth bth;
  bool has_reth = false;
  Reth reth;
  bool has_aeth = false;
  Aeth aeth;
  bool has_immdt = false;
  std::uint32_t immdt = 0;

  // MAC control, valid for pfc (class_enable and 8 quanta) and pause (pause_quanta).
  std::uint16_t pfc_class_enable = 0;
  std::array<std::uint16_t, 8> pfc_quanta{};
  std::uint16_t pause_quanta = 0;
};

// Decodes an Ethernet frame (without FCS) of which `caplen` bytes were captured.
void decode_ethernet(const std::uint8_t* data, std::uint32_t caplen, DecodedFrame& out) noexcept;

// Human name of a BTH opcode ("RC_RDMA_WRITE_ONLY", "CNP", "UD_SEND_ONLY", ...); "OPCODE_0xNN"
// style names are not produced here: unknown opcodes give nullptr.
const char* opcode_name(std::uint8_t opcode) noexcept;

}  // namespace rocehil::capture
