#include "rocehil/capture/decode.hpp"

#include <arpa/inet.h>
#include <fmt/format.h>

#include <cstring>

#include "frames/frame_layout.hpp"
#include "frames/mirror_layout.hpp"
#include "rocehil/common/byte_order.hpp"
#include "rocehil/common/roce_wire.hpp"

namespace rocehil::capture {

namespace w = rocehil::wire;

bool IpAddress::is_v4() const noexcept {
  for (int i = 0; i < 10; ++i)
    if (bytes[i] != 0) return false;
  return bytes[10] == 0xff && bytes[11] == 0xff;
}

std::optional<IpAddress> IpAddress::parse(const std::string& text) noexcept {
  std::uint8_t b[16];
  if (inet_pton(AF_INET, text.c_str(), b) == 1) return v4(b);
  if (inet_pton(AF_INET6, text.c_str(), b) == 1) return v6(b);
  return std::nullopt;
}

namespace {

char* write_decimal(char* out, unsigned v) noexcept {
  if (v >= 100) *out++ = static_cast<char>('0' + v / 100);
  if (v >= 10) *out++ = static_cast<char>('0' + v / 10 % 10);
  *out++ = static_cast<char>('0' + v % 10);
  return out;
}

char* write_hex(char* out, unsigned v) noexcept {
  static constexpr char digits[] = "0123456789abcdef";
  bool started = false;
  for (int shift = 12; shift >= 0; shift -= 4) {
    const unsigned d = (v >> shift) & 0xf;
    if (d != 0 || started || shift == 0) {
      *out++ = digits[d];
      started = true;
    }
  }
  return out;
}

}  // namespace

char* IpAddress::format_to(char* out) const noexcept {
  const auto& b = bytes;
  if (is_v4()) {
    for (int i = 12; i < 16; ++i) {
      if (i != 12) *out++ = '.';
      out = write_decimal(out, b[i]);
    }
    return out;
  }
  // RFC 5952: lower-case hex, leading zeros dropped, the longest run (>= 2) of zero groups as "::".
  unsigned g[8];
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
  for (int i = 0; i < 8; ++i) {
    if (i == best) {
      *out++ = ':';
      *out++ = ':';
      i += best_len - 1;
      continue;
    }
    if (i != 0 && i != best + best_len) *out++ = ':';
    out = write_hex(out, g[i]);
  }
  return out;
}

std::string IpAddress::to_string() const {
  char text[max_text_size];
  return std::string(text, format_to(text));
}

namespace {

// The BTH and the extended headers an opcode calls for, each only when all its bytes were
// captured. `p` is the BTH, `len` the captured bytes from it on.
void extract_transport(const std::uint8_t* p, std::size_t len, DecodedFrame& out) noexcept {
  Bth& b = out.bth;
  b.opcode = p[0];
  b.solicited = (p[1] & 0x80) != 0;
  b.migreq = (p[1] & 0x40) != 0;
  b.pad_count = static_cast<std::uint8_t>((p[1] >> 4) & 0x3);
  b.tver = p[1] & 0x0f;
  b.pkey = load_be16(p + 2);
  b.fecn = (p[4] & 0x80) != 0;
  b.becn = (p[4] & 0x40) != 0;
  b.dest_qp = bth_dest_qp(p);
  b.ack_req = (p[8] & 0x80) != 0;
  b.psn = bth_psn(p);

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

}  // namespace

void decode_ethernet(const std::uint8_t* data, std::uint32_t caplen, DecodedFrame& out) noexcept {
  out = DecodedFrame{};
  const FrameLayout l = locate_layers(data, caplen);
  out.kind = l.kind;
  out.vlan_tags = l.vlan_tags;
  out.vlan_id = l.vlan_id;
  out.ip_version = l.ip_version;
  if (l.mirror != MirrorKind::none) read_mirror_header(data, caplen, l, out.mirror);
  if (l.ip_version != 0) {
    const std::uint8_t* ip = data + l.l3;
    const std::uint8_t tclass =
        l.ip_version == 4 ? ip[1] : static_cast<std::uint8_t>(load_be16(ip) >> 4);
    out.dscp = tclass >> 2;
    out.ecn = tclass & 0x3;
    out.src = l.ip_version == 4 ? IpAddress::v4(ip + 12) : IpAddress::v6(ip + 8);
    out.dst = l.ip_version == 4 ? IpAddress::v4(ip + 16) : IpAddress::v6(ip + 24);
  }
  switch (l.kind) {
    case FrameKind::roce:
    case FrameKind::roce_malformed:
    case FrameKind::roce_truncated:
      out.udp_src_port = load_be16(data + l.l4);
      out.udp_length = load_be16(data + l.l4 + 4);
      if (l.kind == FrameKind::roce) extract_transport(data + l.bth, l.end - l.bth, out);
      break;
    case FrameKind::pfc:
      out.pfc_class_enable = load_be16(data + l.l3 + 2);
      for (std::size_t i = 0; i < 8; ++i) out.pfc_quanta[i] = load_be16(data + l.l3 + 4 + 2 * i);
      break;
    case FrameKind::pause: out.pause_quanta = load_be16(data + l.l3 + 2); break;
    default: break;
  }
}

const char* to_string(MirrorKind kind) noexcept {
  switch (kind) {
    case MirrorKind::erspan1: return "erspan1";
    case MirrorKind::erspan2: return "erspan2";
    case MirrorKind::erspan3: return "erspan3";
    case MirrorKind::gre_teb: return "gre-teb";
    case MirrorKind::none: break;
  }
  return "none";
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
