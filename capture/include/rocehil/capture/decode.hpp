#pragma once

// Pure decoders: bytes in, facts out. No I/O, no allocation, no exceptions; a frame that is cut
// short decodes as far as its bytes allow and says so in `kind`.

#include <array>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>

namespace rocehil::capture {

// An IPv4 address is stored IPv4-mapped (::ffff:a.b.c.d) so one key type covers both families.
struct IpAddress {
  std::array<std::uint8_t, 16> bytes{};
  // Two 8-byte compares: a mirror session's source is compared on every frame.
  bool operator==(const IpAddress& o) const noexcept {
    std::uint64_t a[2], b[2];
    std::memcpy(a, bytes.data(), 16);
    std::memcpy(b, o.bytes.data(), 16);
    return ((a[0] ^ b[0]) | (a[1] ^ b[1])) == 0;
  }
  bool is_v4() const noexcept;
  std::string to_string() const;
  // Writes the text form (dotted quad, or RFC 5952 for IPv6) at `out`, which has room for
  // max_text_size characters, and returns its end. For output loops: no allocation.
  static constexpr std::size_t max_text_size = 40;
  char* format_to(char* out) const noexcept;
  // Inline: the analyzer makes one for every remote mirror frame's tunnel source.
  static IpAddress v4(const std::uint8_t* four_bytes) noexcept {
    IpAddress a;
    a.bytes[10] = a.bytes[11] = 0xff;
    std::memcpy(a.bytes.data() + 12, four_bytes, 4);
    return a;
  }
  static IpAddress v6(const std::uint8_t* sixteen_bytes) noexcept {
    IpAddress a;
    std::memcpy(a.bytes.data(), sixteen_bytes, 16);
    return a;
  }
  // From text ("198.18.0.1", "2001:db8::1"); nullopt for anything else.
  static std::optional<IpAddress> parse(const std::string& text) noexcept;
};

enum class FrameKind : std::uint8_t {
  other,           // anything that is not one of the below (ARP, TCP, UDP to other ports, ...)
  roce,            // UDP dst 4791 with a complete 12-byte BTH in the captured bytes
  roce_malformed,  // UDP dst 4791 whose UDP length leaves no room for a BTH
  roce_truncated,  // UDP dst 4791 whose BTH was cut by the snap length or the mirror session
  pfc,             // MAC control 0x8808 opcode 0x0101 with all 8 quanta captured
  pause,           // MAC control 0x8808 opcode 0x0001 with its quanta captured
  mac_control_malformed,  // MAC control frame of either opcode cut before its fields end
  // A remote mirror (GRE carrying ERSPAN or TEB) whose tunnel headers do not hold together:
  // cut before they end, longer than the IP packet says, a wrong ERSPAN version, reserved GRE
  // bits set, no mirrored frame inside, or a mirror inside a mirror.
  mirror_malformed,
};

// How a remote mirror carried the frame: GRE (RFC 2784/2890) with ERSPAN (draft-foschiano-erspan)
// or with transparent Ethernet bridging. `none` for a frame taken from a local mirror port.
enum class MirrorKind : std::uint8_t {
  none,
  erspan1,  // GRE 0x88BE without a sequence number: the frame right after GRE
  erspan2,  // GRE 0x88BE with a sequence number, 8-byte ERSPAN header
  erspan3,  // GRE 0x22EB, 12-byte ERSPAN header (+ 8 with the platform-specific subheader)
  gre_teb,  // GRE 0x6558 (Arista's GRE mirror, Linux gretap)
};

// "none", "erspan1", "erspan2", "erspan3", "gre-teb": the spelling of the JSON.
const char* to_string(MirrorKind kind) noexcept;

// ERSPAN III timestamp granularity (its "Gra" field).
enum class TimestampGranularity : std::uint8_t {
  us100 = 0,     // 100 microseconds
  ns100 = 1,     // 100 nanoseconds
  ieee1588 = 2,  // nanoseconds of a PTP second (the seconds, if at all, in subheader ID 3)
  platform = 3,  // platform-specific: not read
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

// What a remote mirror's headers say; valid when kind != none.
struct MirrorHeader {
  MirrorKind kind = MirrorKind::none;
  std::uint8_t outer_ip_version = 0;  // 4 or 6
  IpAddress outer_src;                // the switch sending the session
  IpAddress outer_dst;                // the collector
  bool has_key = false;
  std::uint32_t key = 0;  // GRE key
  bool has_sequence = false;
  std::uint32_t sequence = 0;  // GRE sequence number
  // ERSPAN II and III:
  std::uint16_t session_id = 0;  // 10 bits
  std::uint16_t vlan = 0;        // the original VLAN (12 bits), as the header carries it
  std::uint8_t cos = 0;
  bool truncated = false;        // T: the switch cut the mirrored frame
  std::uint32_t port_index = 0;  // II: Index (20 bits); III: subheader ID 1 or 3 port index
  // ERSPAN III:
  bool has_timestamp = false;  // Gra is not platform-specific
  std::uint32_t timestamp = 0;
  TimestampGranularity granularity = TimestampGranularity::us100;
  bool egress = false;           // D: the frame was mirrored as it left the port
  std::uint8_t platform_id = 0;  // of the optional subheader, 0 without one
  bool has_seconds = false;      // subheader ID 3 with IEEE 1588 granularity
  std::uint32_t seconds = 0;
  std::uint32_t payload_offset = 0;  // where the mirrored frame starts in the captured bytes
};

struct DecodedFrame {
  FrameKind kind = FrameKind::other;
  // A remote mirror's headers; the fields below then describe the mirrored frame inside it.
  MirrorHeader mirror;

  // Layer 2: number of 802.1Q / 802.1ad tags and the innermost VLAN id.
  std::uint8_t vlan_tags = 0;
  std::uint16_t vlan_id = 0;

  // Layer 3, valid when ip_version is 4 or 6.
  std::uint8_t ip_version = 0;
  std::uint8_t dscp = 0;
  std::uint8_t ecn = 0;
  IpAddress src;
  IpAddress dst;

  // Layer 4, valid for roce, roce_malformed and roce_truncated.
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

// Decodes an Ethernet frame (without FCS) of which `caplen` bytes were captured. A remote mirror
// (Ethernet, IPv4 or IPv6, GRE, then ERSPAN or TEB) is opened and the frame inside decoded.
void decode_ethernet(const std::uint8_t* data, std::uint32_t caplen, DecodedFrame& out) noexcept;

// Human name of a BTH opcode ("RC_RDMA_WRITE_ONLY", "CNP", "UD_SEND_ONLY", ...); "OPCODE_0xNN"
// style names are not produced here: unknown opcodes give nullptr.
const char* opcode_name(std::uint8_t opcode) noexcept;

}  // namespace rocehil::capture
