#include "rocehil/capture/decode.hpp"

#include <fmt/format.h>

#include <cstring>

#include "rocehil/common/byte_order.hpp"
#include "rocehil/common/roce_wire.hpp"

namespace rocehil::capture {

namespace w = rocehil::wire;

bool IpAddress::is_v4() const noexcept {
  for (int i = 0; i < 10; ++i)
    if (bytes[i] != 0) return false;
  return bytes[10] == 0xff && bytes[11] == 0xff;
}

IpAddress IpAddress::v4(const std::uint8_t* four_bytes) noexcept {
  IpAddress a;
  a.bytes[10] = a.bytes[11] = 0xff;
  std::memcpy(a.bytes.data() + 12, four_bytes, 4);
  return a;
}

IpAddress IpAddress::v6(const std::uint8_t* sixteen_bytes) noexcept {
  IpAddress a;
  std::memcpy(a.bytes.data(), sixteen_bytes, 16);
  return a;
}

std::string IpAddress::to_string() const {
  const auto& b = bytes;
  if (is_v4()) return fmt::format("{}.{}.{}.{}", b[12], b[13], b[14], b[15]);
  // RFC 5952: lower-case hex, leading zeros dropped, the longest run (>= 2) of zero groups as "::".
  std::uint16_t g[8];
  for (int i = 0; i < 8; ++i) g[i] = load_be16(b.data() + 2 * i);
  int best = -1, best_len = 0;
  for (int i = 0; i < 8;) {
    if (g[i] != 0) {
      ++i;
      continue;
    }
    int j = i;
    while (j < 8 && g[j] == 0) ++j;
    if (j - i > best_len && j - i >= 2) best = i, best_len = j - i;
    i = j;
  }
  std::string s;
  for (int i = 0; i < 8; ++i) {
    if (i == best) {
      s += "::";
      i += best_len - 1;
      continue;
    }
    if (!s.empty() && s.back() != ':') s += ':';
    s += fmt::format("{:x}", g[i]);
  }
  return s;
}

namespace {

void decode_mac_control(const std::uint8_t* p, std::size_t len, DecodedFrame& out) noexcept {
  if (len < 2) {
    out.kind = FrameKind::mac_control_malformed;
    return;
  }
  const std::uint16_t op = load_be16(p);
  if (op == w::mac_control::pfc) {
    if (len < w::mac_control::pfc_payload_size) {
      out.kind = FrameKind::mac_control_malformed;
      return;
    }
    out.kind = FrameKind::pfc;
    out.pfc_class_enable = load_be16(p + 2);
    for (int i = 0; i < 8; ++i) out.pfc_quanta[i] = load_be16(p + 4 + 2 * i);
  } else if (op == w::mac_control::pause) {
    if (len < w::mac_control::pause_payload_size) {
      out.kind = FrameKind::mac_control_malformed;
      return;
    }
    out.kind = FrameKind::pause;
    out.pause_quanta = load_be16(p + 2);
  }
  // Other MAC control opcodes (e.g. EPON GATE) stay `other`.
}

// Decodes the BTH and extended headers of a packet to UDP 4791. `p` is the UDP payload with
// `len` captured bytes; `udp_payload_len` is what the UDP header claims.
void decode_roce(const std::uint8_t* p, std::size_t len, std::size_t udp_payload_len,
                 DecodedFrame& out) noexcept {
  if (len < w::bth_size || udp_payload_len < w::bth_size) {
    out.kind = FrameKind::roce_malformed;
    return;
  }
  out.kind = FrameKind::roce;
  Bth& b = out.bth;
  b.opcode = p[0];
  b.solicited = (p[1] & 0x80) != 0;
  b.migreq = (p[1] & 0x40) != 0;
  b.pad_count = static_cast<std::uint8_t>((p[1] >> 4) & 0x3);
  b.tver = p[1] & 0x0f;
  b.pkey = load_be16(p + 2);
  b.fecn = (p[4] & 0x80) != 0;
  b.becn = (p[4] & 0x40) != 0;
  b.dest_qp = load_be24(p + 5);
  b.ack_req = (p[8] & 0x80) != 0;
  b.psn = load_be24(p + 9);

  if (b.opcode == w::opcode::cnp) return;
  std::size_t off = w::bth_size;
  // RD carries RDETH (4) + DETH (8), UD carries DETH (8) before the headers below.
  const std::uint8_t transport = w::opcode::transport(b.opcode);
  if (transport == w::opcode::transport_rd) off += 12;
  if (transport == w::opcode::transport_ud) off += 8;
  if (transport > w::opcode::transport_ud) return;  // CNP range and vendor opcodes: BTH only
  if (w::opcode::has_reth(b.opcode)) {
    if (off + w::reth_size > len) return;
    out.has_reth = true;
    out.reth.va = load_be64(p + off);
    out.reth.rkey = load_be32(p + off + 8);
    out.reth.dma_length = load_be32(p + off + 12);
    off += w::reth_size;
  }
  if (w::opcode::has_aeth(b.opcode)) {
    if (off + w::aeth_size > len) return;
    out.has_aeth = true;
    out.aeth.syndrome = p[off];
    out.aeth.msn = load_be24(p + off + 1);
    off += w::aeth_size;
  }
  if (w::opcode::has_immdt(b.opcode)) {
    if (off + w::immdt_size > len) return;
    out.has_immdt = true;
    out.immdt = load_be32(p + off);
  }
}

// Decodes UDP at `p` (`len` captured bytes, `l4_len` bytes by the IP header's length).
void decode_udp(const std::uint8_t* p, std::size_t len, DecodedFrame& out) noexcept {
  if (len < w::udp_header_size) return;  // cannot tell the port: not RoCE as far as we can see
  if (load_be16(p + 2) != w::roce_v2_udp_port) return;
  out.udp_src_port = load_be16(p);
  out.udp_length = load_be16(p + 4);
  const std::size_t udp_payload_len =
      out.udp_length >= w::udp_header_size ? out.udp_length - w::udp_header_size : 0;
  decode_roce(p + w::udp_header_size, len - w::udp_header_size, udp_payload_len, out);
}

void decode_ipv4(const std::uint8_t* p, std::size_t len, DecodedFrame& out) noexcept {
  if (len < 20 || (p[0] >> 4) != 4) return;
  const std::size_t ihl = static_cast<std::size_t>(p[0] & 0x0f) * 4;
  if (ihl < 20) return;
  out.ip_version = 4;
  out.dscp = p[1] >> 2;
  out.ecn = p[1] & 0x3;
  out.src = IpAddress::v4(p + 12);
  out.dst = IpAddress::v4(p + 16);
  const bool later_fragment = (load_be16(p + 6) & 0x1fff) != 0;
  if (p[9] != w::ip_proto::udp || later_fragment || len < ihl) return;
  decode_udp(p + ihl, len - ihl, out);
}

void decode_ipv6(const std::uint8_t* p, std::size_t len, DecodedFrame& out) noexcept {
  if (len < 40 || (p[0] >> 4) != 6) return;
  out.ip_version = 6;
  const std::uint8_t tclass = static_cast<std::uint8_t>((p[0] & 0x0f) << 4 | p[1] >> 4);
  out.dscp = tclass >> 2;
  out.ecn = tclass & 0x3;
  out.src = IpAddress::v6(p + 8);
  out.dst = IpAddress::v6(p + 24);
  std::uint8_t next = p[6];
  std::size_t off = 40;
  // Walk the extension headers a mirrored packet may carry; a bounded loop, as a hostile frame
  // could chain many.
  for (int hops = 0; hops < 8; ++hops) {
    if (next == w::ip_proto::udp) {
      if (off <= len) decode_udp(p + off, len - off, out);
      return;
    }
    if (off + 8 > len) return;
    if (next == w::ip_proto::ipv6_fragment) {
      if ((load_be16(p + off + 2) & 0xfff8) != 0) return;  // not the first fragment
      next = p[off];
      off += 8;
    } else if (next == w::ip_proto::ipv6_hop_by_hop || next == w::ip_proto::ipv6_routing ||
               next == w::ip_proto::ipv6_dest_options) {
      next = p[off];
      off += (static_cast<std::size_t>(p[off + 1]) + 1) * 8;
    } else {
      return;
    }
  }
}

}  // namespace

void decode_ethernet(const std::uint8_t* data, std::uint32_t caplen, DecodedFrame& out) noexcept {
  out = DecodedFrame{};
  if (caplen < w::ethernet_header_size) return;
  std::size_t off = 12;
  std::uint16_t type = load_be16(data + off);
  off += 2;
  while ((type == w::ethertype::vlan || type == w::ethertype::qinq ||
          type == w::ethertype::qinq_old) &&
         out.vlan_tags < 8) {
    if (off + w::vlan_tag_size > caplen) return;
    out.vlan_id = load_be16(data + off) & 0x0fff;
    ++out.vlan_tags;
    type = load_be16(data + off + 2);
    off += w::vlan_tag_size;
  }
  const std::uint8_t* p = data + off;
  const std::size_t len = caplen - off;
  switch (type) {
    case w::ethertype::ipv4: decode_ipv4(p, len, out); break;
    case w::ethertype::ipv6: decode_ipv6(p, len, out); break;
    case w::ethertype::mac_control: decode_mac_control(p, len, out); break;
    default: break;
  }
}

const char* opcode_name(std::uint8_t opcode) noexcept {
  namespace op = w::opcode;
  if (opcode == op::cnp) return "CNP";
  // Indexed by the low 5 bits of an RC opcode.
  static constexpr const char* rc_names[] = {
      "RC_SEND_FIRST",
      "RC_SEND_MIDDLE",
      "RC_SEND_LAST",
      "RC_SEND_LAST_WITH_IMMEDIATE",
      "RC_SEND_ONLY",
      "RC_SEND_ONLY_WITH_IMMEDIATE",
      "RC_RDMA_WRITE_FIRST",
      "RC_RDMA_WRITE_MIDDLE",
      "RC_RDMA_WRITE_LAST",
      "RC_RDMA_WRITE_LAST_WITH_IMMEDIATE",
      "RC_RDMA_WRITE_ONLY",
      "RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE",
      "RC_RDMA_READ_REQUEST",
      "RC_RDMA_READ_RESPONSE_FIRST",
      "RC_RDMA_READ_RESPONSE_MIDDLE",
      "RC_RDMA_READ_RESPONSE_LAST",
      "RC_RDMA_READ_RESPONSE_ONLY",
      "RC_ACKNOWLEDGE",
      "RC_ATOMIC_ACKNOWLEDGE",
      "RC_COMPARE_SWAP",
      "RC_FETCH_ADD",
  };
  const std::uint8_t o = op::operation(opcode);
  switch (op::transport(opcode)) {
    case op::transport_rc: return o < std::size(rc_names) ? rc_names[o] : nullptr;
    case op::transport_ud:
      if (opcode == op::ud_send_only) return "UD_SEND_ONLY";
      if (opcode == op::ud_send_only_imm) return "UD_SEND_ONLY_WITH_IMMEDIATE";
      return nullptr;
    default: return nullptr;
  }
}

}  // namespace rocehil::capture
