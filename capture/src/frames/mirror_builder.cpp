#include "rocehil/capture/mirror_builder.hpp"

#include <algorithm>
#include <cstring>

#include "frames/ip_header.hpp"
#include "frames/mirror_layout.hpp"
#include "rocehil/common/byte_order.hpp"
#include "rocehil/common/roce_wire.hpp"

namespace rocehil::capture {

namespace mw = mirror_wire;
namespace w = rocehil::wire;

namespace {

std::uint16_t gre_protocol(MirrorKind kind) noexcept {
  switch (kind) {
    case MirrorKind::erspan3: return mw::erspan_3;
    case MirrorKind::gre_teb: return mw::teb;
    default: return mw::erspan_1_2;
  }
}

bool has_sequence(const MirrorWrap& m) noexcept {
  if (m.kind == MirrorKind::erspan2) return true;  // its GRE S bit is what marks it type II
  if (m.kind == MirrorKind::erspan1) return false;
  return m.with_sequence;
}

std::uint16_t gre_flags(const MirrorWrap& m) noexcept {
  return static_cast<std::uint16_t>((m.with_key ? mw::gre_key : 0) |
                                    (has_sequence(m) ? mw::gre_sequence : 0));
}

std::size_t erspan_size(const MirrorWrap& m) noexcept {
  if (m.kind == MirrorKind::erspan2) return mw::erspan2_header_size;
  if (m.kind == MirrorKind::erspan3)
    return mw::erspan3_header_size + (m.platform_id != 0 ? mw::erspan3_subheader_size : 0);
  return 0;
}

std::size_t carried(const MirrorWrap& m, std::size_t frame) noexcept {
  return m.cut_to != 0 ? std::min<std::size_t>(m.cut_to, frame) : frame;
}

}  // namespace

std::size_t mirror_overhead(const MirrorWrap& m) noexcept {
  return w::ethernet_header_size + (m.src.is_v4() ? 20 : 40) + mw::gre_header_size(gre_flags(m)) +
         erspan_size(m);
}

std::size_t wrap_mirror(const MirrorWrap& m, std::span<const std::uint8_t> frame,
                        std::span<std::uint8_t> out) noexcept {
  const std::size_t payload = carried(m, frame.size());
  const std::size_t size = mirror_overhead(m) + payload;
  if (out.size() < size) return 0;
  std::uint8_t* p = out.data();
  std::memcpy(p, m.dst_mac.data(), 6);
  std::memcpy(p + 6, m.src_mac.data(), 6);
  store_be16(p + 12, m.src.is_v4() ? w::ethertype::ipv4 : w::ethertype::ipv6);
  std::uint8_t* ip = p + w::ethernet_header_size;
  const std::size_t ip_size = m.src.is_v4() ? 20 : 40;
  write_ip_header(ip, m.src, m.dst, w::ip_proto::gre, 0, m.ttl,
                  size - w::ethernet_header_size - ip_size);
  std::uint8_t* g = ip + ip_size;
  store_be16(g, gre_flags(m));
  store_be16(g + 2, gre_protocol(m.kind));
  std::size_t off = 4;
  if (m.with_key) {
    store_be32(g + off, m.key);
    off += 4;
  }
  if (has_sequence(m)) {
    store_be32(g + off, m.sequence);
    off += 4;
  }
  const auto first_word = [&](std::uint32_t version) {
    return (version << 28) | (std::uint32_t{m.vlan & 0x0fffu} << 16) |
           (std::uint32_t{m.cos & 0x7u} << 13) | (m.truncated ? 0x400u : 0u) |
           (m.session_id & 0x3ffu);
  };
  if (m.kind == MirrorKind::erspan2) {
    store_be32(g + off, first_word(mw::erspan2_version));
    store_be32(g + off + 4, m.port_index & 0xfffff);
    off += mw::erspan2_header_size;
  } else if (m.kind == MirrorKind::erspan3) {
    store_be32(g + off, first_word(mw::erspan3_version));
    store_be32(g + off + 4, m.timestamp);
    store_be16(g + off + 8, 0);  // SGT
    // P 0, FT 0 (Ethernet), HW ID 0, D, Gra, O
    store_be16(g + off + 10,
               static_cast<std::uint16_t>((m.egress ? 0x8 : 0) |
                                          (static_cast<unsigned>(m.granularity) << 1) |
                                          (m.platform_id != 0 ? 1 : 0)));
    off += mw::erspan3_header_size;
    if (m.platform_id != 0) {
      const std::uint32_t id = std::uint32_t{m.platform_id} << 26;
      if (m.platform_id == 3) {
        store_be32(g + off, id | (m.port_index & 0x3fff));
        store_be32(g + off + 4, m.seconds);
      } else {
        store_be32(g + off, id);
        store_be32(g + off + 4, m.port_index);
      }
      off += mw::erspan3_subheader_size;
    }
  }
  std::memcpy(g + off, frame.data(), payload);
  return size;
}

std::vector<std::uint8_t> wrap_mirror(const MirrorWrap& m, std::span<const std::uint8_t> frame) {
  std::vector<std::uint8_t> out(mirror_overhead(m) + carried(m, frame.size()));
  wrap_mirror(m, frame, out);
  return out;
}

}  // namespace rocehil::capture
