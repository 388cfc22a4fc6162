// MirrorTemplate: the frames of a session it learned are opened and read exactly as the
// field-by-field path (locate_layers(), read_mirror_header()) opens and reads them, whatever
// changes from frame to frame; a frame that path would judge differently is not taken. Frames
// sit in buffers of exactly their captured length, so the ASan build sees any overread.

#include <gtest/gtest.h>

#include <tuple>
#include <vector>

#include "addresses.hpp"
#include "frames/mirror_template.hpp"
#include "mirror_samples.hpp"
#include "rocehil/capture/mirror_builder.hpp"

namespace rocehil::capture {
namespace {

using testing::every_wrap;
using testing::sample_frames;

auto layout_fields(const FrameLayout& l) {
  return std::tuple(l.kind, l.ip_version, l.vlan_tags, l.vlan_id, l.l3, l.l4, l.bth, l.end,
                    l.mirror, l.outer_ip_version, l.l2, l.outer_l3, l.gre, l.carried);
}

// Every field of a header the analyzer counts by (COS and the direction it does not).
auto header_fields(const MirrorHeader& m) {
  return std::tuple(m.kind, m.outer_ip_version, m.outer_src, m.outer_dst, m.has_key, m.key,
                    m.has_sequence, m.sequence, m.session_id, m.vlan, m.truncated, m.port_index,
                    m.has_timestamp, m.timestamp, m.granularity, m.platform_id, m.has_seconds,
                    m.seconds, m.payload_offset);
}

// The header as the template reads it: the learned one, with the fields that change read anew.
MirrorHeader template_header(const MirrorTemplate& t, const std::uint8_t* d) {
  MirrorHeader m = t.header();
  const MirrorFrameFields v = t.read(d);
  m.sequence = v.sequence;
  m.timestamp = v.timestamp;
  m.seconds = v.seconds;
  m.port_index = v.port_index;
  m.vlan = v.vlan;
  m.truncated = v.truncated;
  return m;
}

MirrorTemplate learned_from(const std::vector<std::uint8_t>& bytes) {
  MirrorTemplate t;
  const auto size = static_cast<std::uint32_t>(bytes.size());
  const FrameLayout l = locate_layers(bytes.data(), size);
  EXPECT_TRUE(t.learn(bytes.data(), size, l));
  return t;
}

// Whether the template takes the first `caplen` bytes of `bytes`; where it does, it must give
// what the field-by-field path gives.
bool taken_as_field_by_field(const MirrorTemplate& t, const std::vector<std::uint8_t>& bytes,
                             std::uint32_t caplen) {
  const std::vector<std::uint8_t> cut(bytes.begin(), bytes.begin() + caplen);
  FrameLayout got;
  if (!t.match(cut.data(), caplen, got)) return false;
  const FrameLayout want = locate_layers(cut.data(), caplen);
  EXPECT_EQ(layout_fields(got), layout_fields(want));
  MirrorHeader header;
  read_mirror_header(cut.data(), caplen, want, header);
  EXPECT_EQ(header_fields(template_header(t, cut.data())), header_fields(header));
  return true;
}

// The sessions the tests learn: every wrap, and ERSPAN II with a port index and III with each
// granularity and subheader.
std::vector<MirrorWrap> sessions() {
  std::vector<MirrorWrap> out = every_wrap();
  MirrorWrap two;
  two.port_index = 0x54321;
  out.push_back(two);
  for (TimestampGranularity g : {TimestampGranularity::us100, TimestampGranularity::ns100,
                                 TimestampGranularity::ieee1588, TimestampGranularity::platform})
    for (int platform : {0, 1, 3}) {
      MirrorWrap three;
      three.kind = MirrorKind::erspan3;
      three.granularity = g;
      three.platform_id = static_cast<std::uint8_t>(platform);
      three.port_index = platform == 0 ? 0 : 0x2345;
      three.seconds = 1'764'158'400;
      out.push_back(three);
    }
  return out;
}

// What a switch changes from frame to frame of one session, the k-th way: the fields read
// anew, and in the outer headers the IP ID, checksum, DSCP and TTL (or the IPv6 flow label and
// hop limit) and the MAC addresses, which decide nothing.
std::vector<std::uint8_t> next_frame(MirrorWrap w, const std::vector<std::uint8_t>& frame,
                                     unsigned k) {
  w.sequence += 1 + 1000 * k;
  w.vlan = static_cast<std::uint16_t>(7 * k);
  w.cos = static_cast<std::uint8_t>(k % 8);
  w.truncated = k % 2 == 1;
  if (w.port_index != 0 || w.kind == MirrorKind::erspan2) w.port_index += k;
  w.timestamp = 999'999'000 - 12'345 * k;  // below 10^9: an IEEE 1588 nanosecond
  w.seconds += k;
  w.egress = k % 2 == 0;
  if (k == 3) w.cut_to = 60;  // a truncating session
  std::vector<std::uint8_t> b = wrap_mirror(w, frame);
  for (std::size_t i = 0; i < 12; ++i) b[i] ^= static_cast<std::uint8_t>(k);
  constexpr std::size_t ip = 14;
  if (w.src.is_v4()) {
    b[ip + 1] = static_cast<std::uint8_t>(k << 2);
    b[ip + 4] = static_cast<std::uint8_t>(k);
    b[ip + 5] = 0x5a;
    b[ip + 8] = static_cast<std::uint8_t>(64 - k);
    b[ip + 10] = static_cast<std::uint8_t>(0x11 * k);
    b[ip + 11] = 0xa5;
  } else {
    b[ip + 1] |= static_cast<std::uint8_t>(k);
    b[ip + 3] = static_cast<std::uint8_t>(0x30 + k);
    b[ip + 7] = static_cast<std::uint8_t>(64 - k);
  }
  return b;
}

TEST(MirrorTemplate, ASessionsFramesAreOpenedAndReadAsFieldByField) {
  const auto frames = sample_frames();
  for (const MirrorWrap& w : sessions()) {
    SCOPED_TRACE(::testing::Message()
                 << to_string(w.kind) << " v6 " << !w.src.is_v4() << " seq " << w.with_sequence
                 << " granularity " << static_cast<int>(w.granularity) << " platform "
                 << static_cast<int>(w.platform_id));
    const MirrorTemplate t = learned_from(wrap_mirror(w, frames[0]));
    for (std::size_t f = 0; f < frames.size(); ++f)
      for (unsigned k = 0; k < 4; ++k) {
        SCOPED_TRACE(::testing::Message() << "frame " << f << " change " << k);
        const std::vector<std::uint8_t> b = next_frame(w, frames[f], k);
        const auto size = static_cast<std::uint32_t>(b.size());
        EXPECT_TRUE(taken_as_field_by_field(t, b, size));
        // Cut by the snap length anywhere: taken or not, never read differently.
        for (std::uint32_t caplen = 0; caplen < size; ++caplen)
          taken_as_field_by_field(t, b, caplen);
      }
  }
}

TEST(MirrorTemplate, AFrameADecidingFieldSetsApartIsNotTaken) {
  MirrorWrap w;
  w.kind = MirrorKind::erspan3;
  w.granularity = TimestampGranularity::ieee1588;
  w.platform_id = 3;
  w.session_id = 12;
  const auto frame = sample_frames()[0];
  const std::vector<std::uint8_t> learned = wrap_mirror(w, frame);
  const MirrorTemplate t = learned_from(learned);
  ASSERT_TRUE(taken_as_field_by_field(t, learned, static_cast<std::uint32_t>(learned.size())));

  std::vector<std::pair<const char*, std::vector<std::uint8_t>>> cases;
  const auto rewrapped = [&](const char* what, auto change) {
    MirrorWrap other = w;
    change(other);
    cases.emplace_back(what, wrap_mirror(other, frame));
  };
  rewrapped("another session", [](MirrorWrap& o) { o.session_id = 13; });
  rewrapped("another switch", [](MirrorWrap& o) { o.src.bytes[15] ^= 1; });
  rewrapped("another collector", [](MirrorWrap& o) { o.dst.bytes[15] ^= 1; });
  rewrapped("a GRE key", [](MirrorWrap& o) { o.with_key = true; });
  rewrapped("no sequence number", [](MirrorWrap& o) { o.with_sequence = false; });
  rewrapped("another granularity",
            [](MirrorWrap& o) { o.granularity = TimestampGranularity::ns100; });
  rewrapped("another subheader", [](MirrorWrap& o) { o.platform_id = 1; });
  rewrapped("no subheader", [](MirrorWrap& o) { o.platform_id = 0; });
  rewrapped("ERSPAN II", [](MirrorWrap& o) { o.kind = MirrorKind::erspan2; });
  rewrapped("over IPv6", [](MirrorWrap& o) {
    o.src = testing::doc_v6(1);
    o.dst = testing::doc_v6(2);
  });
  constexpr std::size_t ip = 14, gre = 34, erspan = 42;
  const auto edited = [&](const char* what, std::size_t at, std::uint8_t value) {
    std::vector<std::uint8_t> b = learned;
    b[at] = value;
    cases.emplace_back(what, b);
  };
  edited("a later fragment", ip + 7, 0x10);
  edited("IP options", ip, 0x46);
  edited("UDP, not GRE", ip + 9, 17);
  edited("GRE routing", gre, static_cast<std::uint8_t>(learned[gre] | 0x40));
  edited("ERSPAN version 1", erspan, static_cast<std::uint8_t>((learned[erspan] & 0x0f) | 0x10));
  edited("an IP frame type", erspan + 10, static_cast<std::uint8_t>(learned[erspan + 10] | 0x08));
  edited("the platform ID", erspan + 12, static_cast<std::uint8_t>(learned[erspan + 12] ^ 0x04));
  {  // the IP packet ends before the mirrored frame's Ethernet header does: malformed
    std::vector<std::uint8_t> b = learned;
    const std::uint16_t total = static_cast<std::uint16_t>(20 + 8 + 12 + 8 + 13);
    b[ip + 2] = static_cast<std::uint8_t>(total >> 8);
    b[ip + 3] = static_cast<std::uint8_t>(total);
    EXPECT_EQ(locate_layers(b.data(), static_cast<std::uint32_t>(b.size())).kind,
              FrameKind::mirror_malformed);
    cases.emplace_back("a packet too short for the mirrored frame", b);
  }
  for (const auto& [what, bytes] : cases) {
    SCOPED_TRACE(what);
    FrameLayout l;
    EXPECT_FALSE(t.open(bytes.data(), static_cast<std::uint32_t>(bytes.size()), l));
  }

  // A tunnel inside a frame of the session is opened, and its mirrored frame found malformed,
  // as the field-by-field path finds it.
  const std::vector<std::uint8_t> nested = wrap_mirror(w, learned);
  EXPECT_TRUE(taken_as_field_by_field(t, nested, static_cast<std::uint32_t>(nested.size())));
  EXPECT_EQ(locate_layers(nested.data(), static_cast<std::uint32_t>(nested.size())).kind,
            FrameKind::mirror_malformed);
}

TEST(MirrorTemplate, HeadersLongerThanItHoldsAreNotLearned) {
  MirrorWrap w;
  w.src = testing::doc_v6(1);
  w.dst = testing::doc_v6(2);
  const auto frame = sample_frames()[0];
  const std::vector<std::uint8_t> fits = testing::with_hop_by_hop(wrap_mirror(w, frame), 48);
  const std::vector<std::uint8_t> long_one = testing::with_hop_by_hop(wrap_mirror(w, frame), 96);
  ASSERT_EQ(locate_layers(long_one.data(), static_cast<std::uint32_t>(long_one.size())).l2,
            14u + 40 + 96 + 8 + 8);
  MirrorTemplate t = learned_from(fits);
  EXPECT_TRUE(taken_as_field_by_field(t, fits, static_cast<std::uint32_t>(fits.size())));
  const auto size = static_cast<std::uint32_t>(long_one.size());
  const FrameLayout l = locate_layers(long_one.data(), size);
  EXPECT_FALSE(t.learn(long_one.data(), size, l));
  // What it knew before is forgotten, not kept for a session it was not asked about.
  EXPECT_FALSE(taken_as_field_by_field(t, fits, static_cast<std::uint32_t>(fits.size())));
  EXPECT_FALSE(taken_as_field_by_field(t, long_one, size));
}

}  // namespace
}  // namespace rocehil::capture
