#include "rocehil/testbed/mirror_encap.hpp"

#include <algorithm>

#include "rocehil/common/byte_order.hpp"

namespace rocehil::testbed {

namespace {

constexpr std::uint16_t gre_key = 0x2000;       // K: a key follows
constexpr std::uint16_t gre_sequence = 0x1000;  // S: a sequence number follows
constexpr std::uint16_t erspan2_protocol = 0x88BE;
constexpr std::uint16_t erspan3_protocol = 0x22EB;
constexpr std::uint16_t transparent_ethernet = 0x6558;
constexpr std::uint8_t platform_id_1588 = 0x3;  // Port ID/Index and the timestamp's seconds
constexpr std::uint16_t granularity_1588 = 0b10;

// What ERSPAN types II and III begin with: GRE with a sequence number (8 bytes), then the first
// ERSPAN word, Ver | VLAN (0) | COS | En or BSO (0) | T | Session ID. Returns where the rest goes.
std::uint8_t* write_erspan_start(std::uint8_t* p, std::uint16_t protocol, int version, int session,
                                 const MirroredFrame& f) {
  store_be16(p, gre_sequence);
  store_be16(p + 2, protocol);
  store_be32(p + 4, f.sequence);
  store_be32(p + 8, static_cast<std::uint32_t>(version) << 28 |
                        static_cast<std::uint32_t>(f.cos & 0x7) << 13 |
                        static_cast<std::uint32_t>(f.truncated) << 10 |
                        (static_cast<std::uint32_t>(session) & 0x3ff));
  return p + 12;
}

}  // namespace

std::size_t encap_header_bytes(MirrorMode mode) {
  switch (mode) {
    case MirrorMode::local: return 0;
    case MirrorMode::erspan3: return 28;
    case MirrorMode::erspan2: return 16;
    case MirrorMode::gre: return 12;
  }
  return 0;
}

std::size_t write_encap_header(MirrorMode mode, int session, const MirroredFrame& f,
                               std::span<std::uint8_t> out) {
  std::uint8_t* p = out.data();
  switch (mode) {
    case MirrorMode::local: return 0;
    case MirrorMode::gre:
      // RFC 2890's order: key before sequence number.
      store_be16(p, gre_key | gre_sequence);
      store_be16(p + 2, transparent_ethernet);
      store_be32(p + 4, static_cast<std::uint32_t>(session));
      store_be32(p + 8, f.sequence);
      return 12;
    case MirrorMode::erspan2:
      p = write_erspan_start(p, erspan2_protocol, 1, session, f);
      store_be32(p, f.port_index & 0xfffff);  // Reserved (12) is 0
      return 16;
    case MirrorMode::erspan3:
      p = write_erspan_start(p, erspan3_protocol, 2, session, f);
      // With IEEE 1588 granularity the header's 32 bits are the nanoseconds and the platform
      // subheader carries the seconds.
      store_be32(p, f.nanoseconds);
      // SGT 0 | P 1 (an Ethernet frame) | FT 0 (Ethernet) | HW ID 0 | D | Gra | O 1.
      store_be16(p + 4, 0);
      store_be16(p + 6, static_cast<std::uint16_t>(1u << 15 | (f.egress ? 1u : 0u) << 3 |
                                                   granularity_1588 << 1 | 1u));
      store_be32(p + 8,
                 static_cast<std::uint32_t>(platform_id_1588) << 26 | (f.port_index & 0x3fff));
      store_be32(p + 12, f.seconds);
      return 28;
  }
  return 0;
}

std::size_t frame_bytes_kept(MirrorMode mode, int mtu, int truncate) {
  const std::size_t overhead = ipv4_header_bytes + encap_header_bytes(mode);
  const std::size_t fits = mtu > 0 && static_cast<std::size_t>(mtu) > overhead
                               ? static_cast<std::size_t>(mtu) - overhead
                               : 0;
  return truncate > 0 ? std::min(fits, static_cast<std::size_t>(truncate)) : fits;
}

std::uint8_t frame_cos(std::span<const std::uint8_t> frame) {
  constexpr std::size_t ethertype_at = 12;
  if (frame.size() < ethertype_at + 2) return 0;
  const std::uint16_t type = load_be16(frame.data() + ethertype_at);
  if (type == 0x8100 || type == 0x88a8)  // 802.1Q or 802.1ad: the outer tag's priority
    return frame.size() >= ethertype_at + 4 ? frame[ethertype_at + 2] >> 5 : 0;
  const std::size_t ip = ethertype_at + 2;
  if (type == 0x0800 && frame.size() > ip + 1) return frame[ip + 1] >> 5;
  // IPv6: the traffic class spans the low 4 bits of byte 0 and the high 4 of byte 1.
  if (type == 0x86dd && frame.size() > ip) return (frame[ip] >> 1) & 0x7;
  return 0;
}

}  // namespace rocehil::testbed
