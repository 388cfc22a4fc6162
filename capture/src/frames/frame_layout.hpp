#pragma once

// Where the layers of an Ethernet frame start: the first, cheap half of decoding. The analyzer's
// per-frame path locates layers and then reads only the fields it counts; decode_ethernet()
// locates and then extracts every field. One set of bounds checks serves both, so the two can
// never disagree on what is RoCE, malformed, PFC or PAUSE.
//
// A remote mirror is opened here too (mirror_layout.hpp): the offsets below then point into the
// mirrored frame inside the tunnel, so whoever reads them needs no second path for mirrors.

#include <cstdint>

#include "rocehil/capture/decode.hpp"
#include "rocehil/common/byte_order.hpp"
#include "rocehil/common/roce_wire.hpp"

namespace rocehil::capture {

struct FrameLayout {
  FrameKind kind = FrameKind::other;
  std::uint8_t ip_version = 0;  // 4 or 6 when an IP header was captured, else 0
  std::uint8_t vlan_tags = 0;
  std::uint16_t vlan_id = 0;  // innermost tag
  std::uint32_t l3 = 0;       // offset of the IP header, or of the MAC control opcode
  std::uint32_t l4 = 0;       // offset of the UDP header: roce, roce_malformed, roce_truncated
  std::uint32_t bth = 0;      // offset of the BTH: roce
  // Where the frame's captured bytes end: the capture's length, or where the tunnel packet that
  // carried a mirrored frame ends (bytes after it are the outer frame's padding).
  std::uint32_t end = 0;
  // Remote mirrors (mirror != none): the layers above are the mirrored frame's.
  MirrorKind mirror = MirrorKind::none;
  std::uint8_t outer_ip_version = 0;
  std::uint32_t l2 = 0;        // offset of the (mirrored) frame's Ethernet header
  std::uint32_t outer_l3 = 0;  // offset of the outer IP header
  std::uint32_t gre = 0;       // offset of the GRE header
  std::uint32_t carried = 0;   // bytes of the mirrored frame the tunnel packet carried
};

namespace layout_detail {

namespace w = rocehil::wire;

inline void locate_udp(const std::uint8_t* d, std::uint32_t caplen, std::uint32_t l4,
                       FrameLayout& out) noexcept {
  // A UDP header cut before its length field cannot be judged: not RoCE as far as we can see.
  if (l4 + w::udp_header_size > caplen || load_be16(d + l4 + 2) != w::roce_v2_udp_port) return;
  out.l4 = l4;
  out.bth = l4 + static_cast<std::uint32_t>(w::udp_header_size);
  const std::uint16_t udp_length = load_be16(d + l4 + 4);
  if (udp_length < w::udp_header_size + w::bth_size) {
    out.kind = FrameKind::roce_malformed;
  } else {
    out.kind = out.bth + w::bth_size <= caplen ? FrameKind::roce : FrameKind::roce_truncated;
  }
}

// A GRE packet that may carry a remote mirror (mirror_layout.hpp). `l4` is its GRE header,
// `ip_end` where the IP packet ends by its own length field.
inline void locate_gre(const std::uint8_t* d, std::uint32_t caplen, std::uint32_t l3,
                       std::uint32_t l4, std::uint32_t ip_end, FrameLayout& out) noexcept;

inline void locate_ipv4(const std::uint8_t* d, std::uint32_t caplen, std::uint32_t l3,
                        FrameLayout& out) noexcept {
  if (l3 + 20 > caplen || (d[l3] >> 4) != 4) return;
  const std::uint32_t ihl = static_cast<std::uint32_t>(d[l3] & 0x0f) * 4;
  if (ihl < 20) return;
  out.ip_version = 4;
  const bool later_fragment = (load_be16(d + l3 + 6) & 0x1fff) != 0;
  if (later_fragment) return;
  const std::uint8_t proto = d[l3 + 9];
  if (proto == w::ip_proto::udp) return locate_udp(d, caplen, l3 + ihl, out);
  if (proto == w::ip_proto::gre)
    locate_gre(d, caplen, l3, l3 + ihl, l3 + load_be16(d + l3 + 2), out);
}

inline void locate_ipv6(const std::uint8_t* d, std::uint32_t caplen, std::uint32_t l3,
                        FrameLayout& out) noexcept {
  if (l3 + 40 > caplen || (d[l3] >> 4) != 6) return;
  out.ip_version = 6;
  std::uint8_t next = d[l3 + 6];
  std::uint32_t off = l3 + 40;
  // Extension headers a mirrored packet may carry; bounded, as a hostile frame could chain many.
  for (int hops = 0; hops < 8; ++hops) {
    if (next == w::ip_proto::udp) return locate_udp(d, caplen, off, out);
    if (next == w::ip_proto::gre)
      return locate_gre(d, caplen, l3, off, l3 + 40 + load_be16(d + l3 + 4), out);
    if (off + 8 > caplen) return;
    if (next == w::ip_proto::ipv6_fragment) {
      if ((load_be16(d + off + 2) & 0xfff8) != 0) return;  // not the first fragment
      next = d[off];
      off += 8;
    } else if (next == w::ip_proto::ipv6_hop_by_hop || next == w::ip_proto::ipv6_routing ||
               next == w::ip_proto::ipv6_dest_options) {
      next = d[off];
      off += (static_cast<std::uint32_t>(d[off + 1]) + 1) * 8;
    } else {
      return;
    }
  }
}

inline void locate_mac_control(const std::uint8_t* d, std::uint32_t caplen, std::uint32_t l3,
                               FrameLayout& out) noexcept {
  if (l3 + 2 > caplen) {
    out.kind = FrameKind::mac_control_malformed;
    return;
  }
  const std::uint16_t op = load_be16(d + l3);
  std::uint32_t need = 0;
  if (op == w::mac_control::pfc) {
    need = w::mac_control::pfc_payload_size;
    out.kind = FrameKind::pfc;
  } else if (op == w::mac_control::pause) {
    need = w::mac_control::pause_payload_size;
    out.kind = FrameKind::pause;
  } else {
    return;  // other MAC control opcodes (EPON GATE, ...) stay `other`
  }
  if (l3 + need > caplen) out.kind = FrameKind::mac_control_malformed;
}

// The layers of the Ethernet frame at `l2`: the captured frame itself, or the one a mirror carried.
inline void locate_ethernet(const std::uint8_t* d, std::uint32_t caplen, std::uint32_t l2,
                            FrameLayout& out) noexcept {
  if (l2 + w::ethernet_header_size > caplen) return;
  std::uint32_t off = l2 + 12;
  std::uint16_t type = load_be16(d + off);
  off += 2;
  while ((type == w::ethertype::vlan || type == w::ethertype::qinq ||
          type == w::ethertype::qinq_old) &&
         out.vlan_tags < 8) {
    if (off + w::vlan_tag_size > caplen) return;
    out.vlan_id = load_be16(d + off) & 0x0fff;
    ++out.vlan_tags;
    type = load_be16(d + off + 2);
    off += static_cast<std::uint32_t>(w::vlan_tag_size);
  }
  out.l3 = off;
  switch (type) {
    case w::ethertype::ipv4: locate_ipv4(d, caplen, off, out); break;
    case w::ethertype::ipv6: locate_ipv6(d, caplen, off, out); break;
    case w::ethertype::mac_control: locate_mac_control(d, caplen, off, out); break;
    default: break;
  }
}

}  // namespace layout_detail

// Finds the layers of an Ethernet frame (without FCS) of which `caplen` bytes were captured.
// A remote mirror's tunnel, once opened, is followed by its mirrored frame's layers.
// Writes `out` in place: a copy of a layout just built field by field would wait on those
// narrow stores.
inline void locate_layers(const std::uint8_t* d, std::uint32_t caplen, FrameLayout& out) noexcept {
  out = FrameLayout{};
  out.end = caplen;
  layout_detail::locate_ethernet(d, caplen, 0, out);
  if (out.l2 != 0 && out.kind == FrameKind::other)
    layout_detail::locate_ethernet(d, out.end, out.l2, out);
}

// locate_layers() in two steps, for a caller that opens a known tunnel itself
// (MirrorTemplate::open): the layers of the Ethernet frame at out.l2, up to out.end, with
// `out`'s tunnel fields as they are (none: out.l2 = 0 and out.end the capture's length).
// Then, where that frame is a tunnel not yet opened (out.l2 != 0 and out.kind other),
// locate_mirrored_frame() goes on inside it.
inline void locate_frame(const std::uint8_t* d, FrameLayout& out) noexcept {
  layout_detail::locate_ethernet(d, out.end, out.l2, out);
}
inline bool opened_tunnel(const FrameLayout& out) noexcept {
  return out.l2 != 0 && out.kind == FrameKind::other;
}
inline FrameLayout locate_layers(const std::uint8_t* d, std::uint32_t caplen) noexcept {
  FrameLayout out;
  locate_layers(d, caplen, out);
  return out;
}

// BTH fields the analyzer and the decoder both read, from a BTH that was captured whole.
inline std::uint32_t bth_dest_qp(const std::uint8_t* bth) noexcept {
  return load_be24(bth + 5);
}
inline std::uint32_t bth_psn(const std::uint8_t* bth) noexcept {
  return load_be24(bth + 9);
}

}  // namespace rocehil::capture

#include "frames/mirror_layout.hpp"

namespace rocehil::capture {

// ECN bits of the IP header of a located frame (ip_version 4 or 6).
inline std::uint8_t ip_ecn(const std::uint8_t* d, const FrameLayout& l) noexcept {
  return l.ip_version == 4 ? d[l.l3 + 1] & 0x3 : (d[l.l3 + 1] >> 4) & 0x3;
}

// DSCP of the IP header of a located frame: IPv4's TOS and IPv6's traffic class, upper 6 bits.
inline std::uint8_t ip_dscp(const std::uint8_t* d, const FrameLayout& l) noexcept {
  return l.ip_version == 4
             ? d[l.l3 + 1] >> 2
             : static_cast<std::uint8_t>(((d[l.l3] & 0x0f) << 2) | (d[l.l3 + 1] >> 6));
}

}  // namespace rocehil::capture
