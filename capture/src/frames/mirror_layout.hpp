#pragma once

// Remote mirrors: GRE (RFC 2784; key and sequence number, RFC 2890) carrying ERSPAN type I, II or
// III (draft-foschiano-erspan-03; Wireshark's packet-erspan.c and tcpdump's print-erspan.c read
// the same fields) or transparent Ethernet bridging. Completes frame_layout.hpp: locate_gre()
// opens the tunnel and locates the mirrored frame's layers in place, so the analyzer, the
// decoder and the PSN replay read a mirrored frame as they read one from a local mirror port.
// It does not locate the mirrored frame itself: locate_layers() does, in a second pass over the
// Ethernet layer, so neither pass calls itself and both stay inlined in the analyzer's loop.
// read_mirror_header() then reads what the tunnel headers say, for whoever needs it.

#include <algorithm>
#include <cstdint>

#include "frames/frame_layout.hpp"
#include "rocehil/capture/decode.hpp"
#include "rocehil/common/byte_order.hpp"

namespace rocehil::capture {

namespace mirror_wire {

inline constexpr std::uint16_t erspan_1_2 = 0x88be;  // GRE protocol: ERSPAN I (no S bit), II
inline constexpr std::uint16_t erspan_3 = 0x22eb;
inline constexpr std::uint16_t teb = 0x6558;  // transparent Ethernet bridging

// GRE's first 16 bits: C R K S s Recur(3) Flags(5) Ver(3).
inline constexpr std::uint16_t gre_checksum = 0x8000;
inline constexpr std::uint16_t gre_key = 0x2000;
inline constexpr std::uint16_t gre_sequence = 0x1000;
// Routing, strict source route, recursion control, flags and version: zero in any GRE a switch
// sends (RFC 2784 receivers discard packets with any of them set).
inline constexpr std::uint16_t gre_must_be_zero = 0x4fff;

inline constexpr std::uint32_t erspan2_header_size = 8;
inline constexpr std::uint32_t erspan3_header_size = 12;
inline constexpr std::uint32_t erspan3_subheader_size = 8;
inline constexpr std::uint8_t erspan2_version = 1;
inline constexpr std::uint8_t erspan3_version = 2;
inline constexpr std::uint8_t erspan3_frame_type_ethernet = 0;

// GRE header bytes: 4, plus 4 for each of checksum (with its reserved half), key and sequence.
constexpr std::uint32_t gre_header_size(std::uint16_t flags) noexcept {
  return 4 + ((flags & gre_checksum) ? 4 : 0) + ((flags & gre_key) ? 4 : 0) +
         ((flags & gre_sequence) ? 4 : 0);
}

}  // namespace mirror_wire

namespace layout_detail {

// Marks the frame as a broken mirror; the mirrored frame's layers stay unlocated.
inline void broken_mirror(FrameLayout& out) noexcept {
  out.kind = FrameKind::mirror_malformed;
}

inline void locate_gre(const std::uint8_t* d, std::uint32_t caplen, std::uint32_t l3,
                       std::uint32_t gre, std::uint32_t ip_end, FrameLayout& out) noexcept {
  namespace mw = mirror_wire;
  if (gre + 4 > caplen) return;  // what the GRE carries cannot be seen: not a mirror we can tell
  const std::uint16_t flags = load_be16(d + gre);
  const std::uint16_t protocol = load_be16(d + gre + 2);
  MirrorKind kind = MirrorKind::none;
  if (protocol == mw::teb) kind = MirrorKind::gre_teb;
  if (protocol == mw::erspan_1_2)
    kind = (flags & mw::gre_sequence) ? MirrorKind::erspan2 : MirrorKind::erspan1;
  if (protocol == mw::erspan_3) kind = MirrorKind::erspan3;
  if (kind == MirrorKind::none) return;  // GRE carrying something else (IP, MPLS, NVGRE keys...)
  if (out.mirror != MirrorKind::none) return broken_mirror(out);  // a mirror inside a mirror
  out.mirror = kind;
  out.outer_ip_version = out.ip_version;
  out.outer_l3 = l3;
  out.gre = gre;
  out.ip_version = 0;
  out.vlan_tags = 0;
  out.vlan_id = 0;
  out.l3 = 0;
  // Every header must lie inside both the IP packet, as its length field says, and the bytes
  // captured: a header claiming more is broken, and nothing past `caplen` is ever read.
  const std::uint32_t limit = ip_end < caplen ? ip_end : caplen;
  std::uint32_t off = gre + mw::gre_header_size(flags);
  if ((flags & mw::gre_must_be_zero) != 0 || ip_end < gre || off > limit) return broken_mirror(out);
  if (kind == MirrorKind::erspan2) {
    if (off + mw::erspan2_header_size > limit || (d[off] >> 4) != mw::erspan2_version)
      return broken_mirror(out);
    off += mw::erspan2_header_size;
  } else if (kind == MirrorKind::erspan3) {
    if (off + mw::erspan3_header_size > limit || (d[off] >> 4) != mw::erspan3_version)
      return broken_mirror(out);
    const std::uint16_t word = load_be16(d + off + 10);
    if (((word >> 10) & 0x1f) != mw::erspan3_frame_type_ethernet) {
      out.kind = FrameKind::other;  // an IP payload without its Ethernet header: not decoded
      return;
    }
    off += mw::erspan3_header_size + ((word & 1) ? mw::erspan3_subheader_size : 0);
    if (off > limit) return broken_mirror(out);
  }
  // The mirrored frame: at least an Ethernet header, or there is nothing mirrored at all.
  if (ip_end < off + w::ethernet_header_size) return broken_mirror(out);
  // locate_layers() goes on with the mirrored frame's own layers from here.
  out.l2 = off;
  out.carried = ip_end - off;
  out.end = limit;
  out.kind = FrameKind::other;
}

}  // namespace layout_detail

// What the tunnel headers of a located mirror (l.mirror != none) say. Reads only header bytes
// locate_gre() found inside the frame; for a mirror_malformed frame, the fields it could read.
inline void read_mirror_header(const std::uint8_t* d, std::uint32_t caplen, const FrameLayout& l,
                               MirrorHeader& m) noexcept {
  namespace mw = mirror_wire;
  m = MirrorHeader{};
  m.kind = l.mirror;
  m.outer_ip_version = l.outer_ip_version;
  const std::uint8_t* ip = d + l.outer_l3;
  if (l.outer_ip_version == 4) {
    m.outer_src = IpAddress::v4(ip + 12);
    m.outer_dst = IpAddress::v4(ip + 16);
  } else {
    m.outer_src = IpAddress::v6(ip + 8);
    m.outer_dst = IpAddress::v6(ip + 24);
  }
  m.payload_offset = l.l2;
  const std::uint16_t flags = load_be16(d + l.gre);
  std::uint32_t off = l.gre + 4 + ((flags & mw::gre_checksum) ? 4 : 0);
  if (flags & mw::gre_key) {
    if (off + 4 > caplen) return;
    m.has_key = true;
    m.key = load_be32(d + off);
    off += 4;
  }
  if (flags & mw::gre_sequence) {
    if (off + 4 > caplen) return;
    m.has_sequence = true;
    m.sequence = load_be32(d + off);
    off += 4;
  }
  if (l.mirror == MirrorKind::erspan2 || l.mirror == MirrorKind::erspan3) {
    if (off + 4 > caplen) return;
    const std::uint32_t word = load_be32(d + off);
    m.vlan = static_cast<std::uint16_t>((word >> 16) & 0x0fff);
    m.cos = static_cast<std::uint8_t>((word >> 13) & 0x7);
    m.truncated = (word & 0x400) != 0;
    m.session_id = static_cast<std::uint16_t>(word & 0x3ff);
  }
  if (l.mirror == MirrorKind::erspan2 && off + 8 <= caplen) {
    m.port_index = load_be32(d + off + 4) & 0xfffff;
  }
  if (l.mirror == MirrorKind::erspan3 && off + 12 <= caplen) {
    const std::uint16_t word = load_be16(d + off + 10);
    m.granularity = static_cast<TimestampGranularity>((word >> 1) & 0x3);
    m.has_timestamp = m.granularity != TimestampGranularity::platform;
    m.timestamp = load_be32(d + off + 4);
    m.egress = (word & 0x8) != 0;
    if ((word & 1) && off + 20 <= caplen) {
      const std::uint32_t sub = load_be32(d + off + 12);
      m.platform_id = static_cast<std::uint8_t>(sub >> 26);
      if (m.platform_id == 1) m.port_index = load_be32(d + off + 16);
      if (m.platform_id == 3) {
        m.port_index = sub & 0x3fff;
        m.has_seconds = m.granularity == TimestampGranularity::ieee1588;
        m.seconds = load_be32(d + off + 16);
      }
    }
  }
}

// An ERSPAN III timestamp is taken at the switch; only 32 bits of it travel. The time it stands
// for is the one nearest the capture time among those its bits allow (with IEEE 1588 and
// subheader 3's seconds, the whole time). A switch clock further than this from the collector's
// is another time base (uptime, unsynchronised): its timestamps are not used.
inline constexpr std::uint64_t max_switch_clock_skew_ns = 1'000'000'000;

namespace mirror_wire {

// An ERSPAN III timestamp's tick in ns and the span its 32 bits cover (0, 0: not a time here).
struct TimestampUnit {
  std::uint64_t tick_ns = 0;
  std::uint64_t period_ns = 0;
};
constexpr TimestampUnit timestamp_unit(TimestampGranularity g) noexcept {
  switch (g) {
    case TimestampGranularity::us100: return {100'000, (std::uint64_t{1} << 32) * 100'000};
    case TimestampGranularity::ns100: return {100, (std::uint64_t{1} << 32) * 100};
    case TimestampGranularity::ieee1588: return {1, 1'000'000'000};  // ns of a second
    case TimestampGranularity::platform: break;
  }
  return {};
}

}  // namespace mirror_wire

// The time of a frame of session `m` (its header: granularity, has_timestamp, has_seconds) whose
// headers carry `timestamp` and `seconds`: the one nearest `capture_ns` that they allow, if
// within max_switch_clock_skew_ns of it.
inline bool switch_time_ns(const MirrorHeader& m, std::uint32_t timestamp, std::uint32_t seconds,
                           std::uint64_t capture_ns, std::uint64_t& out) noexcept {
  if (!m.has_timestamp) return false;
  const mirror_wire::TimestampUnit unit = mirror_wire::timestamp_unit(m.granularity);
  if (unit.tick_ns == 0) return false;
  if (m.granularity == TimestampGranularity::ieee1588 && timestamp >= 1'000'000'000) return false;
  std::uint64_t time = 0;
  if (m.granularity == TimestampGranularity::ieee1588 && m.has_seconds) {
    time = std::uint64_t{seconds} * 1'000'000'000 + timestamp;
  } else {
    const std::uint64_t period = unit.period_ns;
    time = capture_ns - capture_ns % period + timestamp * unit.tick_ns;
    const auto ahead = static_cast<std::int64_t>(time - capture_ns);
    if (ahead > static_cast<std::int64_t>(period / 2) && time >= period) {
      time -= period;
    } else if (ahead < -static_cast<std::int64_t>(period / 2)) {
      time += period;
    }
  }
  const auto ahead = static_cast<std::int64_t>(time - capture_ns);
  const auto skew = static_cast<std::uint64_t>(ahead < 0 ? -ahead : ahead);
  if (skew > max_switch_clock_skew_ns) return false;
  out = time;
  return true;
}

// switch_time_ns() for frame after frame: the start of the period the last frame's time fell in,
// so that the next ones need neither a division nor the granularity's case. Any period start
// giving a time closer to the capture time than half a period and the skew allowed gives the
// one switch_time_ns() finds; anything else (a tie at exactly half a period included) is asked
// of switch_time_ns().
class SwitchClock {
 public:
  bool time_ns(const MirrorHeader& m, std::uint32_t timestamp, std::uint32_t seconds,
               std::uint64_t capture_ns, std::uint64_t& out) noexcept {
    if (m.granularity == granularity_ && timestamp < limit_) {
      const std::uint64_t time = start_ + timestamp * tick_ns_;
      const auto ahead = static_cast<std::int64_t>(time - capture_ns);
      if (ahead < near_ && ahead > -near_) {
        out = time;
        return true;
      }
    }
    if (!switch_time_ns(m, timestamp, seconds, capture_ns, out)) return false;
    const mirror_wire::TimestampUnit unit = mirror_wire::timestamp_unit(m.granularity);
    const bool whole_time = m.granularity == TimestampGranularity::ieee1588 && m.has_seconds;
    granularity_ = whole_time ? none : m.granularity;
    tick_ns_ = unit.tick_ns;
    start_ = out - timestamp * unit.tick_ns;
    near_ = static_cast<std::int64_t>(std::min(unit.period_ns / 2, max_switch_clock_skew_ns));
    limit_ =
        m.granularity == TimestampGranularity::ieee1588 ? 1'000'000'000 : std::uint64_t{1} << 32;
    return true;
  }

 private:
  static constexpr auto none = static_cast<TimestampGranularity>(0xff);
  TimestampGranularity granularity_ = none;  // of the last frame timed; none: ask each time
  std::uint64_t tick_ns_ = 0;
  std::uint64_t start_ = 0;  // a period start: a multiple of the period
  std::int64_t near_ = 0;
  std::uint64_t limit_ = 0;  // timestamps from here on are no time (IEEE 1588: 10^9 ns)
};

inline bool switch_time_ns(const MirrorHeader& m, std::uint64_t capture_ns,
                           std::uint64_t& out) noexcept {
  return switch_time_ns(m, m.timestamp, m.seconds, capture_ns, out);
}

// The fields of a mirror's headers that change from frame to frame of one session; the rest of
// a MirrorHeader stays as the session's first frame had it (mirror_template.hpp).
struct MirrorFrameFields {
  std::uint32_t sequence = 0;
  std::uint32_t timestamp = 0;
  std::uint32_t seconds = 0;
  std::uint32_t port_index = 0;
  std::uint16_t vlan = 0;
  bool truncated = false;
};

inline MirrorFrameFields frame_fields(const MirrorHeader& m) noexcept {
  return {m.sequence, m.timestamp, m.seconds, m.port_index, m.vlan, m.truncated};
}

}  // namespace rocehil::capture
