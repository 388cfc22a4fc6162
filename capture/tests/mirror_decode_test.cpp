// Remote mirrors in the one decoder: GRE with ERSPAN I, II, III or TEB, over IPv4 and IPv6, opened
// and the mirrored frame read as if captured from a local mirror port; hostile tunnel headers
// counted as malformed without a byte read past the frame (the ASan build checks that: every
// frame here sits in a buffer of exactly its captured length).

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <tuple>

#include "addresses.hpp"
#include "decode_exact.hpp"
#include "frames/mirror_layout.hpp"
#include "hex.hpp"
#include "mirror_samples.hpp"
#include "rocehil/capture/decode.hpp"
#include "rocehil/capture/frame_builder.hpp"
#include "rocehil/capture/mirror_builder.hpp"
#include "rocehil/common/roce_wire.hpp"

namespace rocehil::capture {
namespace {

using testing::decode;
using testing::doc_v6;
using testing::every_wrap;
using testing::from_hex;
using testing::sample_frames;
using testing::v4;

// The mirrored frame's own fields, as decode_ethernet gives them for the frame itself.
auto inner_fields(const DecodedFrame& d) {
  return std::tuple(d.kind, d.vlan_tags, d.vlan_id, d.ip_version, d.dscp, d.ecn, d.src, d.dst,
                    d.udp_src_port, d.udp_length, d.bth.opcode, d.bth.dest_qp, d.bth.psn,
                    d.bth.becn, d.has_reth, d.reth.dma_length, d.has_aeth, d.aeth.syndrome,
                    d.pfc_class_enable, d.pfc_quanta, d.pause_quanta);
}

TEST(MirrorDecode, ScapyErspanTwoIsOpenedAndItsHeaderRead) {
  const auto bytes = from_hex(testing::scapy_erspan2);
  const DecodedFrame d = decode(bytes);
  EXPECT_EQ(inner_fields(d), inner_fields(decode(from_hex(testing::scapy_write_only))));
  const MirrorHeader& m = d.mirror;
  EXPECT_EQ(m.kind, MirrorKind::erspan2);
  EXPECT_EQ(m.outer_ip_version, 4);
  EXPECT_EQ(m.outer_src, v4(198, 19, 1, 201));
  EXPECT_EQ(m.outer_dst, v4(198, 19, 0, 2));
  EXPECT_TRUE(m.has_sequence);
  EXPECT_EQ(m.sequence, 7u);
  EXPECT_FALSE(m.has_key);
  EXPECT_EQ(m.session_id, 5);
  EXPECT_EQ(m.vlan, 100);
  EXPECT_EQ(m.cos, 3);
  EXPECT_TRUE(m.truncated);
  EXPECT_EQ(m.port_index, 0x12345u);
  EXPECT_FALSE(m.has_timestamp);
  EXPECT_EQ(m.payload_offset, 14u + 20 + 8 + 8);
}

TEST(MirrorDecode, ScapyErspanThreeOverIpv6WithPlatformSubheader) {
  const DecodedFrame d = decode(from_hex(testing::scapy_erspan3));
  EXPECT_EQ(inner_fields(d), inner_fields(decode(from_hex(testing::scapy_write_only))));
  const MirrorHeader& m = d.mirror;
  EXPECT_EQ(m.kind, MirrorKind::erspan3);
  EXPECT_EQ(m.outer_ip_version, 6);
  EXPECT_EQ(m.outer_src, doc_v6(0x5e));
  EXPECT_EQ(m.sequence, 0xfffffffeu);
  EXPECT_EQ(m.session_id, 1023);
  EXPECT_EQ(m.vlan, 7);
  EXPECT_FALSE(m.truncated);
  EXPECT_TRUE(m.has_timestamp);
  EXPECT_EQ(m.timestamp, 123456789u);
  EXPECT_EQ(m.granularity, TimestampGranularity::ieee1588);
  EXPECT_TRUE(m.egress);
  EXPECT_EQ(m.platform_id, 3);
  EXPECT_EQ(m.port_index, 0x1abcu);
  EXPECT_TRUE(m.has_seconds);
  EXPECT_EQ(m.seconds, 1764158400u);
  EXPECT_EQ(m.payload_offset, 14u + 40 + 8 + 12 + 8);
}

TEST(MirrorDecode, ScapyGreTebWithKeyAndSequence) {
  const DecodedFrame d = decode(from_hex(testing::scapy_gre_teb));
  EXPECT_EQ(inner_fields(d), inner_fields(decode(from_hex(testing::scapy_write_only))));
  EXPECT_EQ(d.mirror.kind, MirrorKind::gre_teb);
  EXPECT_TRUE(d.mirror.has_key);
  EXPECT_EQ(d.mirror.key, 42u);
  EXPECT_EQ(d.mirror.sequence, 3u);
}

// The builder writes what scapy writes for the same fields: the tests and the bench wrap with it.
TEST(MirrorBuilder, WritesScapysBytes) {
  const auto frame = from_hex(testing::scapy_write_only);
  MirrorWrap two;
  two.sequence = 7;
  two.session_id = 5;
  two.vlan = 100;
  two.cos = 3;
  two.truncated = true;
  two.port_index = 0x12345;
  EXPECT_EQ(wrap_mirror(two, frame), from_hex(testing::scapy_erspan2));

  MirrorWrap three;
  three.kind = MirrorKind::erspan3;
  three.src = doc_v6(0x5e);
  three.dst = doc_v6(0xc0);
  three.sequence = 0xfffffffe;
  three.session_id = 1023;
  three.vlan = 7;
  three.timestamp = 123456789;
  three.granularity = TimestampGranularity::ieee1588;
  three.egress = true;
  three.platform_id = 3;
  three.port_index = 0x1abc;
  three.seconds = 1764158400;
  EXPECT_EQ(wrap_mirror(three, frame), from_hex(testing::scapy_erspan3));

  MirrorWrap teb;
  teb.kind = MirrorKind::gre_teb;
  teb.with_key = true;
  teb.key = 42;
  teb.sequence = 3;
  EXPECT_EQ(wrap_mirror(teb, frame), from_hex(testing::scapy_gre_teb));
}

TEST(MirrorDecode, EveryWrapOfEveryFrameDecodesAsTheFrameItself) {
  for (const auto& frame : sample_frames())
    for (const MirrorWrap& w : every_wrap()) {
      const DecodedFrame d = decode(wrap_mirror(w, frame));
      SCOPED_TRACE(::testing::Message()
                   << to_string(w.kind) << " v6 " << !w.src.is_v4() << " seq " << w.with_sequence);
      EXPECT_EQ(inner_fields(d), inner_fields(decode(frame)));
      EXPECT_EQ(d.mirror.kind, w.kind);
      EXPECT_EQ(d.mirror.outer_src, w.src);
      EXPECT_EQ(d.mirror.has_sequence, w.kind == MirrorKind::erspan2 ||
                                           (w.kind != MirrorKind::erspan1 && w.with_sequence));
      if (w.kind == MirrorKind::erspan2 || w.kind == MirrorKind::erspan3) {
        EXPECT_EQ(d.mirror.session_id, 12);
      }
      EXPECT_EQ(d.mirror.payload_offset, mirror_overhead(w));
    }
}

TEST(MirrorDecode, AFrameThatIsNoMirrorReadsAsBefore) {
  for (const auto& frame : sample_frames()) EXPECT_EQ(decode(frame).mirror.kind, MirrorKind::none);
  // GRE carrying IPv4 (protocol 0x0800) is a tunnel, not a mirror: `other`, as before.
  auto gre_ip = wrap_mirror(MirrorWrap{}, sample_frames()[0]);
  gre_ip[14 + 20 + 2] = 0x08;
  gre_ip[14 + 20 + 3] = 0x00;
  const DecodedFrame d = decode(gre_ip);
  EXPECT_EQ(d.kind, FrameKind::other);
  EXPECT_EQ(d.mirror.kind, MirrorKind::none);
  EXPECT_EQ(d.ip_version, 4);
}

TEST(MirrorDecode, ATruncatingSessionKeepsWholeHeadersAndCutsInsideOneAreTruncated) {
  RoceFrame f;
  f.payload_size = 4000;
  f.reth.dma_length = 4000;
  const auto frame = build(f);
  MirrorWrap w;
  w.truncated = true;
  w.cut_to = 128;
  const DecodedFrame whole = decode(wrap_mirror(w, frame));
  EXPECT_EQ(whole.kind, FrameKind::roce);
  EXPECT_TRUE(whole.mirror.truncated);
  EXPECT_TRUE(whole.has_reth);
  EXPECT_EQ(whole.udp_length, 8u + 12 + 16 + 4000 + 4);  // the frame's, not what was carried
  w.cut_to = 14 + 20 + 8 + 6;                            // inside the BTH
  EXPECT_EQ(decode(wrap_mirror(w, frame)).kind, FrameKind::roce_truncated);
  // Cut by the collector's snap length instead: the same.
  w.cut_to = 0;
  const auto wrapped = wrap_mirror(w, frame);
  EXPECT_EQ(decode(wrapped, mirror_overhead(w) + 14 + 20 + 8 + 12).kind, FrameKind::roce);
  EXPECT_EQ(decode(wrapped, mirror_overhead(w) + 14 + 20 + 8 + 5).kind, FrameKind::roce_truncated);
}

// A wrapped RoCE frame and the offsets of its outer IPv4 total length, GRE and ERSPAN headers.
struct Hostile {
  std::vector<std::uint8_t> bytes;
  static constexpr std::size_t ip = 14, ip_length = 16, gre = 34, erspan = 42, inner = 50;
};

Hostile erspan2_frame() {
  return {wrap_mirror(MirrorWrap{}, sample_frames()[0])};
}

void set_ip_length(std::vector<std::uint8_t>& b, std::uint16_t total) {
  b[Hostile::ip_length] = static_cast<std::uint8_t>(total >> 8);
  b[Hostile::ip_length + 1] = static_cast<std::uint8_t>(total);
}

TEST(MirrorDecode, HostileTunnelHeadersAreMalformedAndNeverReadPastTheFrame) {
  const auto good = erspan2_frame().bytes;
  ASSERT_EQ(decode(good).kind, FrameKind::roce);
  std::vector<std::pair<const char*, std::vector<std::uint8_t>>> cases;
  {  // GRE flags claim key and checksum too: the headers run past the IP packet's length
    auto b = good;
    b[Hostile::gre] |= 0xa0;
    set_ip_length(b, 20 + 4 + 4 + 4 + 4);
    cases.emplace_back("GRE claims more than the packet holds", b);
  }
  {  // IP length ends inside the ERSPAN header
    auto b = good;
    set_ip_length(b, 20 + 8 + 4);
    cases.emplace_back("IP length inside the ERSPAN header", b);
  }
  {  // Zero-length ERSPAN payload: the packet ends where the mirrored frame would start
    auto b = good;
    b.resize(Hostile::inner);
    set_ip_length(b, 20 + 8 + 8);
    cases.emplace_back("zero-length ERSPAN payload", b);
  }
  {  // A payload too short to be an Ethernet header
    auto b = good;
    b.resize(Hostile::inner + 10);
    set_ip_length(b, 20 + 8 + 8 + 10);
    cases.emplace_back("payload shorter than Ethernet", b);
  }
  {
    auto b = good;
    b[Hostile::erspan] = 0x30;  // version 3: not type II
    cases.emplace_back("wrong ERSPAN version", b);
  }
  {
    auto b = good;
    b[Hostile::gre + 1] |= 0x01;  // GRE version 1 (PPTP)
    cases.emplace_back("GRE version 1", b);
  }
  {
    auto b = good;
    b[Hostile::gre] |= 0x40;  // routing present (RFC 1701)
    cases.emplace_back("GRE routing bit", b);
  }
  {  // A mirror inside a mirror
    MirrorWrap outer;
    outer.session_id = 2;
    cases.emplace_back("nested tunnel", wrap_mirror(outer, good));
  }
  {  // ERSPAN III says a platform subheader follows; the packet ends first
    MirrorWrap w;
    w.kind = MirrorKind::erspan3;
    w.platform_id = 3;
    auto b = wrap_mirror(w, sample_frames()[0]);
    const std::size_t header_end = 14 + 20 + 8 + 12 + 4;
    b.resize(header_end);
    set_ip_length(b, static_cast<std::uint16_t>(header_end - 14));
    cases.emplace_back("ERSPAN III subheader past the end", b);
  }
  for (const auto& [what, bytes] : cases) {
    SCOPED_TRACE(what);
    EXPECT_EQ(decode(bytes).kind, FrameKind::mirror_malformed);
  }
  // Cut by the snap length anywhere inside the tunnel headers: malformed, whatever the cut.
  for (std::size_t cut = Hostile::gre + 4; cut < Hostile::inner; ++cut) {
    SCOPED_TRACE(cut);
    EXPECT_EQ(decode(good, cut).kind, FrameKind::mirror_malformed);
  }
  // Whole tunnel headers and a mirrored frame cut before its own Ethernet header ends: the
  // mirror is sound, the frame in it unreadable, as a local capture cut as short.
  const DecodedFrame cut_inner = decode(good, Hostile::inner + 13);
  EXPECT_EQ(cut_inner.kind, FrameKind::other);
  EXPECT_EQ(cut_inner.mirror.kind, MirrorKind::erspan2);
  // Before the GRE protocol field is captured nothing says it is a mirror.
  EXPECT_EQ(decode(good, Hostile::gre + 3).kind, FrameKind::other);
}

TEST(MirrorDecode, EveryCutOfEveryWrapStaysInsideTheFrame) {
  // Under ASan an overread fails the test; without it, the kinds must still be sane.
  for (const auto& frame : sample_frames())
    for (const MirrorWrap& w : every_wrap()) {
      const auto bytes = wrap_mirror(w, frame);
      for (std::size_t cut = 0; cut <= bytes.size(); ++cut) {
        const DecodedFrame d = decode(bytes, cut);
        if (cut == bytes.size()) {
          EXPECT_NE(d.kind, FrameKind::mirror_malformed);
        }
      }
    }
}

TEST(SwitchTime, EachGranularityNearTheCaptureTime) {
  const std::uint64_t capture = 1'764'158'400'123'456'789;  // 2025-11-26, ns
  MirrorHeader m;
  m.has_timestamp = true;
  std::uint64_t t = 0;

  // 100 ns units: 2^32 of them are 429 s; the switch stamped 3 us before the collector.
  m.granularity = TimestampGranularity::ns100;
  const std::uint64_t at_switch = capture - 3'000;
  m.timestamp = static_cast<std::uint32_t>(at_switch / 100);
  ASSERT_TRUE(switch_time_ns(m, capture, t));
  EXPECT_EQ(t, at_switch / 100 * 100);

  // 100 us units.
  m.granularity = TimestampGranularity::us100;
  m.timestamp = static_cast<std::uint32_t>(at_switch / 100'000);
  ASSERT_TRUE(switch_time_ns(m, capture, t));
  EXPECT_EQ(t, at_switch / 100'000 * 100'000);

  // IEEE 1588 without seconds: the nanoseconds of the second nearest the capture time, also
  // when the switch stamped just before a second boundary the collector passed.
  m.granularity = TimestampGranularity::ieee1588;
  const std::uint64_t just_after_second = 1'764'158'401'000'000'200;
  m.timestamp = 999'999'900;  // 300 ns earlier, in the second before
  ASSERT_TRUE(switch_time_ns(m, just_after_second, t));
  EXPECT_EQ(t, 1'764'158'400'999'999'900u);
  m.timestamp = 1'000'000'000;  // no such nanosecond
  EXPECT_FALSE(switch_time_ns(m, capture, t));

  // IEEE 1588 with subheader 3's seconds: the whole time, if near the collector's.
  m.timestamp = 123'456'000;
  m.has_seconds = true;
  m.seconds = 1'764'158'400;
  ASSERT_TRUE(switch_time_ns(m, capture, t));
  EXPECT_EQ(t, 1'764'158'400'123'456'000u);
  m.seconds = 1'764'158'000;  // 400 s apart: another clock
  EXPECT_FALSE(switch_time_ns(m, capture, t));

  // A switch counting 100 ns units since it booted: not the collector's clock.
  m = MirrorHeader{};
  m.has_timestamp = true;
  m.granularity = TimestampGranularity::ns100;
  m.timestamp = 5'000'000;  // 0.5 s after a boot, seen minutes later
  EXPECT_FALSE(switch_time_ns(m, capture, t));
  m.granularity = TimestampGranularity::platform;
  EXPECT_FALSE(switch_time_ns(m, capture, t));
}

// SwitchClock, frame after frame, gives what switch_time_ns() gives each frame on its own: across
// period boundaries, with clocks near, far and exactly half a period apart, and granularity
// changing under it.
TEST(SwitchTime, TheClockOfASessionAgreesWithTheRuleFrameAfterFrame) {
  std::mt19937_64 rng(11);
  SwitchClock clock;
  std::uint64_t capture = 1'764'158'400'000'000'000;
  std::size_t timed = 0, not_timed = 0;
  for (int run = 0; run < 8; ++run) {
    MirrorHeader m;
    m.has_timestamp = true;
    m.granularity = static_cast<TimestampGranularity>(run % 3);
    m.has_seconds = run == 5;
    const std::uint64_t tick = mirror_wire::timestamp_unit(m.granularity).tick_ns;
    const std::uint64_t period = mirror_wire::timestamp_unit(m.granularity).period_ns;
    for (int i = 0; i < 20'000; ++i) {
      // Steps that cross the 1588 second and, over a run, the 429 s of 100 ns units.
      capture += rng() % (run == 1 ? 60'000'000'000 : 200'000'000);
      std::int64_t skew = static_cast<std::int64_t>(rng() % 3'000'000'000) - 1'500'000'000;
      if (i % 97 == 0) skew = 3'600'000'000'000;                       // an hour off: another clock
      if (i % 89 == 0) skew = static_cast<std::int64_t>(period / 2);   // a tie
      if (i % 83 == 0) skew = -static_cast<std::int64_t>(period / 2);  // the other tie
      const std::uint64_t at_switch = capture + static_cast<std::uint64_t>(skew);
      std::uint32_t timestamp = static_cast<std::uint32_t>(at_switch % period / tick);
      if (i % 101 == 0 && m.granularity == TimestampGranularity::ieee1588)
        timestamp = 1'000'000'000 + static_cast<std::uint32_t>(i);  // no such nanosecond
      const auto seconds = static_cast<std::uint32_t>(at_switch / 1'000'000'000);
      std::uint64_t want = 0, got = 0;
      const bool by_rule = switch_time_ns(m, timestamp, seconds, capture, want);
      ASSERT_EQ(clock.time_ns(m, timestamp, seconds, capture, got), by_rule)
          << "run " << run << " frame " << i;
      if (by_rule) {
        ASSERT_EQ(got, want) << "run " << run << " frame " << i;
        ++timed;
      } else {
        ++not_timed;
      }
    }
  }
  EXPECT_GT(timed, 100'000u);
  EXPECT_GT(not_timed, 1'000u);
}

}  // namespace
}  // namespace rocehil::capture
