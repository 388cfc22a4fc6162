#include "rocehil/capture/analyzer.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <deque>
#include <random>
#include <tuple>

#include "addresses.hpp"
#include "rocehil/capture/frame_builder.hpp"
#include "rocehil/common/roce_wire.hpp"

namespace rocehil::capture {
namespace {

namespace op = wire::opcode;

IpAddress v4(std::uint8_t last) {
  return testing::v4(198, 18, 0, last);
}

// Feeds frames to an Analyzer, keeping their bytes alive.
class Feed {
 public:
  explicit Feed(AnalyzerOptions o = {}) : analyzer_(o) {}

  void add(std::vector<std::uint8_t> bytes, std::uint64_t ts_ns, std::uint32_t snaplen = 65535,
           std::uint16_t link = link_type::ethernet, std::uint32_t interface = 0) {
    frames_.push_back(std::move(bytes));
    const auto& b = frames_.back();
    Frame f;
    f.ts_ns = ts_ns;
    f.wire_len = static_cast<std::uint32_t>(b.size());
    f.caplen = std::min(f.wire_len, snaplen);
    f.link_type = link;
    f.interface = interface;
    f.data = b.data();
    analyzer_.add(f);
  }

  // A request from .1 to .2 on QP 0x101 with the given opcode and PSN.
  void request(std::uint8_t opcode, std::uint32_t psn, std::uint64_t ts = 0,
               std::uint32_t dma = 0) {
    RoceFrame f;
    f.bth.opcode = opcode;
    f.bth.psn = psn;
    f.reth.dma_length = dma;
    f.payload_size = opcode == op::rc_read_request ? 0 : 64;
    add(build(f), ts);
  }

  Analysis result() const { return analyzer_.result(); }

 private:
  Analyzer analyzer_;
  std::deque<std::vector<std::uint8_t>> frames_;
};

const Flow& only_flow(const Analysis& a) {
  EXPECT_EQ(a.flows.size(), 1u);
  return a.flows.at(0);
}

TEST(Analyzer, EmptyCapture) {
  Feed feed;
  const Analysis a = feed.result();
  EXPECT_EQ(a.frames, 0u);
  EXPECT_EQ(a.roce.packets, 0u);
  EXPECT_TRUE(a.flows.empty());
  EXPECT_TRUE(a.timeline.bins.empty());
}

TEST(Analyzer, RocePacketsIncludeCnpsAndFlowsExcludeThem) {
  Feed feed;
  feed.request(op::rc_write_only, 1);
  feed.add(build(cnp_frame(v4(2), v4(1), 0x101)), 10);
  feed.add(build(cnp_frame(v4(2), v4(1), 0x101)), 20);
  feed.add(build(cnp_frame(v4(3), v4(1), 0x202)), 30);
  const Analysis a = feed.result();
  EXPECT_EQ(a.frames, 4u);
  EXPECT_EQ(a.roce.packets, 4u);
  EXPECT_EQ(a.cnp.count, 3u);
  ASSERT_EQ(a.cnp.by_dest_qp.size(), 2u);
  EXPECT_EQ(a.cnp.by_dest_qp[0], (std::pair<std::uint32_t, std::uint64_t>{0x101, 2}));
  EXPECT_EQ(a.cnp.by_dest_qp[1], (std::pair<std::uint32_t, std::uint64_t>{0x202, 1}));
  EXPECT_EQ(only_flow(a).stats.packets, 1u);
  EXPECT_EQ(a.roce.by_opcode[op::cnp], 3u);
  EXPECT_EQ(a.roce.by_opcode[op::rc_write_only], 1u);
}

TEST(Analyzer, ABthCutIsTruncatedAShortUdpLengthMalformedNeitherCountedAsPackets) {
  Feed feed;
  RoceFrame f;
  feed.add(build(f), 0, 14 + 20 + 8 + 11);  // BTH cut by the snap length
  feed.add(build(f), 0, 14 + 20 + 8 + 12);  // BTH complete
  feed.add(build(f), 0, 14 + 20 + 7);       // UDP cut: not RoCE at all
  auto short_udp = build(f);
  short_udp[14 + 20 + 4] = 0;  // UDP length 8 + 11: no room for a BTH
  short_udp[14 + 20 + 5] = 8 + 11;
  feed.add(short_udp, 0);
  const Analysis a = feed.result();
  EXPECT_EQ(a.frames, 4u);
  EXPECT_EQ(a.roce.packets, 1u);
  EXPECT_EQ(a.roce.truncated, 1u);
  EXPECT_EQ(a.roce.malformed, 1u);
}

TEST(Analyzer, FlowBytesAreWireLengthsWhateverTheSnapLength) {
  Feed full, cut;
  RoceFrame f;
  f.payload_size = 4096;
  f.reth.dma_length = 4096;
  const auto bytes = build(f);
  for (int i = 0; i < 3; ++i) {
    full.add(bytes, static_cast<std::uint64_t>(i));
    cut.add(bytes, static_cast<std::uint64_t>(i), 128);
  }
  EXPECT_EQ(only_flow(full.result()).stats.bytes, 3 * bytes.size());
  EXPECT_EQ(only_flow(cut.result()).stats.bytes, 3 * bytes.size());
  EXPECT_EQ(cut.result().bytes, 3 * bytes.size());
}

TEST(Analyzer, FlowKeyIsSourceDestinationAndDestQp) {
  Feed feed;
  RoceFrame f;
  feed.add(build(f), 0);
  f.bth.dest_qp = 0x102;  // another QP between the same hosts
  feed.add(build(f), 0);
  f.src = v4(9);  // another source to the first QP
  f.bth.dest_qp = 0x101;
  feed.add(build(f), 0);
  f.udp_src_port = 1;  // the UDP source port is not part of the key
  feed.add(build(f), 0);
  const Analysis a = feed.result();
  ASSERT_EQ(a.flows.size(), 3u);
  EXPECT_EQ(a.flows[0].stats.packets, 2u);  // most bytes first
  EXPECT_EQ(a.flows[0].key.src, v4(9));
}

TEST(Analyzer, EcnCeCountsOnlyBothBitsSet) {
  Feed feed;
  RoceFrame f;
  for (int ecn : {0b00, 0b01, 0b10, 0b11, 0b11}) {
    f.ecn = static_cast<std::uint8_t>(ecn);
    feed.add(build(f), 0);
  }
  const Analysis a = feed.result();
  EXPECT_EQ(a.roce.ecn_ce, 2u);
  EXPECT_EQ(only_flow(a).stats.ecn_ce, 2u);
}

TEST(Analyzer, InOrderPsnsHaveNoGapsOrRetransmits) {
  Feed feed;
  feed.request(op::rc_write_first, 10);
  feed.request(op::rc_write_middle, 11);
  feed.request(op::rc_write_last, 12);
  feed.request(op::rc_send_only, 13);
  feed.request(op::rc_write_only_imm, 14);
  const FlowStats s = only_flow(feed.result()).stats;
  EXPECT_EQ(s.psn_gaps, 0u);
  EXPECT_EQ(s.retransmits, 0u);
}

TEST(Analyzer, ASkippedRunOfPsnsIsOneGapEvent) {
  Feed feed;
  feed.request(op::rc_write_only, 1);
  feed.request(op::rc_write_only, 2);
  feed.request(op::rc_write_only, 7);  // 3..6 missing: one event
  feed.request(op::rc_write_only, 8);
  feed.request(op::rc_write_only, 10);  // 9 missing: another
  EXPECT_EQ(only_flow(feed.result()).stats.psn_gaps, 2u);
  EXPECT_EQ(only_flow(feed.result()).stats.retransmits, 0u);
}

TEST(Analyzer, GoBackNResendsCountEachPacketAtOrBelowTheHighest) {
  Feed feed;
  for (std::uint32_t psn : {1u, 2u, 4u, 5u, 3u, 4u, 5u, 6u}) feed.request(op::rc_write_only, psn);
  const FlowStats s = only_flow(feed.result()).stats;
  EXPECT_EQ(s.psn_gaps, 1u);     // 2 -> 4
  EXPECT_EQ(s.retransmits, 3u);  // 3, 4, 5 again
}

TEST(Analyzer, PsnWrapsAt24Bits) {
  Feed feed;
  for (std::uint32_t psn : {0xfffffeu, 0xffffffu, 0u, 1u}) feed.request(op::rc_write_only, psn);
  FlowStats s = only_flow(feed.result()).stats;
  EXPECT_EQ(s.psn_gaps, 0u);
  EXPECT_EQ(s.retransmits, 0u);

  Feed again;
  for (std::uint32_t psn : {0xfffffeu, 0xffffffu, 1u, 0xffffffu})
    again.request(op::rc_write_only, psn);
  s = only_flow(again.result()).stats;
  EXPECT_EQ(s.psn_gaps, 1u);     // 0 skipped across the wrap
  EXPECT_EQ(s.retransmits, 1u);  // 0xffffff is behind 1
}

TEST(Analyzer, ReadRequestReservesItsResponsePsns) {
  Feed feed;
  feed.request(op::rc_read_request, 100, 0, 65536);  // up to 256 response packets at MTU 256
  feed.request(op::rc_read_request, 116, 1, 4096);   // MTU 4096: 16 PSNs later, not a gap
  feed.request(op::rc_write_only, 132, 2);           // 4096 / 256 = 16: still within reach
  feed.request(op::rc_write_only, 134, 3);           // 133 skipped after a 1-PSN request: a gap
  const FlowStats s = only_flow(feed.result()).stats;
  EXPECT_EQ(s.psn_gaps, 1u);
  EXPECT_EQ(s.retransmits, 0u);
}

TEST(Analyzer, ResponsesAndAcksDoNotTouchPsnCounters) {
  Feed feed;
  feed.request(op::rc_write_only, 1);
  RoceFrame f;
  f.bth.opcode = op::rc_read_response_only;
  f.bth.psn = 500;
  feed.add(build(f), 0);
  feed.request(op::rc_write_only, 2);
  EXPECT_EQ(only_flow(feed.result()).stats.psn_gaps, 0u);
}

TEST(Analyzer, NaksAreSyndromes0x60To0x7fOnAcknowledge) {
  Feed feed;
  RoceFrame f;
  f.src = v4(2);
  f.dst = v4(1);
  f.bth.opcode = op::rc_acknowledge;
  for (int syndrome : {0x00, 0x1f, 0x20, 0x3f, 0x60, 0x61, 0x62, 0x63, 0x7f, 0x80}) {
    f.aeth.syndrome = static_cast<std::uint8_t>(syndrome);
    feed.add(build(f), 0);
  }
  const Analysis a = feed.result();
  EXPECT_EQ(only_flow(a).stats.naks, 5u);
  EXPECT_EQ(a.roce.naks, 5u);
  EXPECT_EQ(a.roce.acks, 2u);
  EXPECT_EQ(a.roce.rnr_naks, 2u);
  EXPECT_EQ(only_flow(a).stats.psn_gaps, 0u);
}

// Planted truth per class: data, CE marks, CNPs, ACKs and NAKs on their own DSCPs, over IPv4 and
// IPv6 (whose DSCP spans two bytes), each class's counts what was built on it.
TEST(Analyzer, CountsEachTrafficClassByItsDscp) {
  Feed feed;
  std::array<DscpCounts, 64> truth{};
  auto add = [&](RoceFrame f) {
    const auto bytes = build(f);
    DscpCounts& c = truth[f.dscp];
    ++c.packets;
    c.bytes += bytes.size();
    c.ecn_ce += f.ecn == 0b11;
    c.cnps += f.bth.opcode == op::cnp;
    if (f.bth.opcode == op::rc_acknowledge) {
      c.acks += f.aeth.syndrome < 0x20;
      c.rnr_naks += f.aeth.syndrome >= 0x20 && f.aeth.syndrome < 0x40;
      c.naks += f.aeth.syndrome >= 0x60 && f.aeth.syndrome < 0x80;
    }
    feed.add(bytes, 0);
  };
  for (std::uint32_t psn = 0; psn < 5; ++psn) {
    RoceFrame f;
    f.bth.psn = psn;
    f.payload_size = 256;
    f.ecn = psn % 2 ? 0b11 : 0b10;
    add(f);
  }
  for (int dscp : {48, 48, 26}) {
    RoceFrame f = cnp_frame(v4(2), v4(1), 0x101);
    f.dscp = static_cast<std::uint8_t>(dscp);
    add(f);
  }
  for (int syndrome : {0x00, 0x1f, 0x20, 0x60, 0x61}) {
    RoceFrame f;
    f.src = v4(2);
    f.dst = v4(1);
    f.dscp = 46;
    f.bth.opcode = op::rc_acknowledge;
    f.aeth.syndrome = static_cast<std::uint8_t>(syndrome);
    add(f);
  }
  for (int dscp : {10, 63, 0}) {
    RoceFrame f;
    f.src = testing::doc_v6(1);
    f.dst = testing::doc_v6(2);
    f.dscp = static_cast<std::uint8_t>(dscp);
    f.ecn = 0b11;
    add(f);
  }
  const Analysis a = feed.result();
  DscpCounts sum{};
  for (std::size_t d = 0; d < 64; ++d) {
    const DscpCounts& got = a.roce.by_dscp[d];
    const DscpCounts& want = truth[d];
    EXPECT_EQ(
        std::tie(got.packets, got.bytes, got.ecn_ce, got.cnps, got.acks, got.naks, got.rnr_naks),
        std::tie(want.packets, want.bytes, want.ecn_ce, want.cnps, want.acks, want.naks,
                 want.rnr_naks))
        << "DSCP " << d;
    sum.packets += got.packets;
    sum.ecn_ce += got.ecn_ce;
    sum.cnps += got.cnps;
    sum.acks += got.acks;
    sum.naks += got.naks;
  }
  EXPECT_EQ(truth[26].packets, 6u);  // the plan's shape, not only the loop's: 5 data + 1 CNP
  EXPECT_EQ(truth[46].naks, 2u);
  EXPECT_EQ(sum.packets, a.roce.packets);
  EXPECT_EQ(sum.ecn_ce, a.roce.ecn_ce);
  EXPECT_EQ(sum.cnps, a.cnp.count);
  EXPECT_EQ(sum.acks, a.roce.acks);
  EXPECT_EQ(sum.naks, a.roce.naks);
}

TEST(Analyzer, FirstAndLastTimestampsPerFlow) {
  Feed feed;
  feed.request(op::rc_write_only, 1, 5000);
  feed.request(op::rc_write_only, 2, 4000);  // mirror ports reorder a little
  feed.request(op::rc_write_only, 3, 9000);
  const FlowStats s = only_flow(feed.result()).stats;
  EXPECT_EQ(s.first_ns, 4000u);
  EXPECT_EQ(s.last_ns, 9000u);
}

TEST(Analyzer, PfcPerPriority) {
  AnalyzerOptions o;
  o.link_gbps = 400;
  Feed feed(o);
  // Priority 3 XOFF twice, then XON; priority 0's quanta with its bit clear are ignored.
  feed.add(build_pfc(0b0000'1000, {0xffff, 0, 0, 0xffff}), 0);
  feed.add(build_pfc(0b0000'1000, {0, 0, 0, 0x100}), 1);
  feed.add(build_pfc(0b0000'1000, {}), 2);
  feed.add(build_pfc(0b1000'0001, {0, 0, 0, 0, 0, 0, 0, 3}), 3);
  const Analysis a = feed.result();
  EXPECT_EQ(a.pfc.frames, 4u);
  const PfcPriority& p3 = a.pfc.priorities[3];
  EXPECT_EQ(p3.frames, 3u);
  EXPECT_EQ(p3.xoff, 2u);
  EXPECT_EQ(p3.xon, 1u);
  EXPECT_EQ(p3.quanta, 0xffffu + 0x100u);
  EXPECT_DOUBLE_EQ(p3.pause_ns, (0xffff + 0x100) * 512.0 / 400.0);
  EXPECT_EQ(a.pfc.priorities[0].frames, 1u);
  EXPECT_EQ(a.pfc.priorities[0].xon, 1u);
  EXPECT_EQ(a.pfc.priorities[0].quanta, 0u);
  EXPECT_EQ(a.pfc.priorities[7].xoff, 1u);
  EXPECT_EQ(a.pfc.priorities[7].quanta, 3u);
  EXPECT_EQ(a.pfc.priorities[1].frames, 0u);
  EXPECT_EQ(a.pause_8023x.frames, 0u);
  EXPECT_EQ(a.roce.packets, 0u);
}

// A file merged from a 10G and a 100G link: each frame's quanta are time at its own link's speed.
TEST(Analyzer, EachInterfacesPausesAreTimedAtItsOwnSpeed) {
  AnalyzerOptions o;
  o.link_gbps = 10;
  o.interface_link_gbps = {10, 100};
  o.storm_ms = 1;
  Feed feed(o);
  const MacAddress a{0x02, 0, 0, 0, 0, 1}, b{0x02, 0, 0, 0, 0, 2}, c{0x02, 0, 0, 0, 0, 3};
  feed.add(build_pfc(0b1000, {0, 0, 0, 0xffff}, a), 1'000'000, 65535, link_type::ethernet, 0);
  feed.add(build_pfc(0b1000, {0, 0, 0, 0xffff}, b), 1'000'000, 65535, link_type::ethernet, 1);
  feed.add(build_pause(100, c), 2'000'000, 65535, link_type::ethernet, 1);
  feed.add(build_pause(100, c), 3'000'000, 65535, link_type::ethernet, 7);  // beyond the list
  feed.add(build_pfc(0b1000, {}, c), 11'000'000);                           // the window's end
  const Analysis r = feed.result();
  const PfcPriority& p3 = r.pfc.priorities[3];
  EXPECT_DOUBLE_EQ(p3.pause_ns, 0xffff * 51.2 + 0xffff * 5.12);
  EXPECT_DOUBLE_EQ(p3.paused_ns, 0xffff * 51.2 + 0xffff * 5.12);
  EXPECT_DOUBLE_EQ(p3.longest_pause_ns, 0xffff * 51.2);
  EXPECT_EQ(p3.storms, 1u);  // 3.36 ms at 10G; 0.34 ms at 100G is none
  ASSERT_EQ(r.pfc.storms.size(), 1u);
  EXPECT_EQ(r.pfc.storms[0].source_mac, a);
  EXPECT_DOUBLE_EQ(r.pause_8023x.pause_ns, 100 * 5.12 + 100 * 51.2);
}

TEST(Analyzer, PauseIsCountedApartFromPfc) {
  Feed feed;
  feed.add(build_pause(0xffff), 0);
  feed.add(build_pause(0), 1);
  const Analysis a = feed.result();
  EXPECT_EQ(a.pause_8023x.frames, 2u);
  EXPECT_EQ(a.pause_8023x.xoff, 1u);
  EXPECT_DOUBLE_EQ(a.pause_8023x.pause_ns, 0xffff * 5.12);
  EXPECT_EQ(a.pfc.frames, 0u);
}

// Pause accounting through the analyzer, from frames built on the wire format. The numbers are
// worked out by hand from the rules in analysis.hpp: at 100G one quantum is 5.12 ns, so 0xffff
// quanta pause for 335'539.2 ns.
constexpr std::uint64_t T0 = 1'700'000'000'000'000'000ull;
constexpr MacAddress leaf_mac{0x02, 0, 0, 0, 0, 0x0a};
constexpr MacAddress spine_mac{0x02, 0, 0, 0, 0, 0x5b};

// Priority 3 stormed by the leaf (an XOFF of 0xffff every 100 us for 2.9 ms), a short pause on
// priority 5 and an 802.3x PAUSE from the spine, and RoCE until 10 ms.
void pause_scenario(Feed& feed) {
  for (std::uint64_t i = 0; i < 30; ++i)
    feed.add(build_pfc(0b1000, {0, 0, 0, 0xffff}, leaf_mac), T0 + i * 100'000);
  feed.add(build_pfc(0b10'0000, {0, 0, 0, 0, 0, 1000}, spine_mac), T0 + 5'000'000);
  feed.add(build_pfc(0b10'0000, {}, spine_mac), T0 + 5'002'000);  // XON after 2 us
  feed.add(build_pause(100, spine_mac), T0 + 6'000'000);          // 512 ns
  feed.add(build(RoceFrame{}), T0 + 10'000'000);
}

TEST(Analyzer, PausedTimeLongestPauseStormsAndFraction) {
  AnalyzerOptions o;
  o.storm_ms = 1;
  Feed feed(o);
  pause_scenario(feed);
  const Analysis a = feed.result();
  EXPECT_EQ(a.window_start_ns, T0);
  EXPECT_EQ(a.window_end_ns, T0 + 10'000'000);
  const double storm_ns = 29 * 100'000 + 335'539.2;
  const PfcPriority& p3 = a.pfc.priorities[3];
  EXPECT_NEAR(p3.paused_ns, storm_ns, 1e-6);
  EXPECT_NEAR(p3.longest_pause_ns, storm_ns, 1e-6);
  EXPECT_NEAR(p3.pause_fraction, storm_ns / 10'000'000, 1e-12);
  EXPECT_EQ(p3.storms, 1u);
  EXPECT_DOUBLE_EQ(p3.pause_ns, 30 * 335'539.2);  // the pause requested, refreshes and all
  const PfcPriority& p5 = a.pfc.priorities[5];
  EXPECT_DOUBLE_EQ(p5.paused_ns, 2000);
  EXPECT_DOUBLE_EQ(p5.longest_pause_ns, 2000);
  EXPECT_DOUBLE_EQ(p5.pause_fraction, 2000.0 / 10'000'000);
  EXPECT_EQ(p5.storms, 0u);
  EXPECT_DOUBLE_EQ(a.pause_8023x.paused_ns, 512);
  EXPECT_DOUBLE_EQ(a.pause_8023x.pause_fraction, 512.0 / 10'000'000);
  EXPECT_EQ(a.pause_8023x.storms, 0u);
  ASSERT_EQ(a.pfc.storms.size(), 1u);
  const PfcStorm& s = a.pfc.storms[0];
  EXPECT_EQ(s.priority, 3);
  EXPECT_EQ(s.source_mac, leaf_mac);
  EXPECT_EQ(s.start_ns, T0);
  EXPECT_EQ(s.end_ns, T0 + 3'235'539);
  EXPECT_FALSE(s.ongoing);
  EXPECT_FALSE(a.pfc.direction_known);
  EXPECT_EQ(a.pfc.from_spine.frames, 0u);
}

TEST(Analyzer, StormMsIsTheThreshold) {
  AnalyzerOptions o;
  o.storm_ms = 4;  // the 3.2 ms pause is no storm now
  Feed feed(o);
  pause_scenario(feed);
  const Analysis a = feed.result();
  EXPECT_EQ(a.pfc.priorities[3].storms, 0u);
  EXPECT_TRUE(a.pfc.storms.empty());
  EXPECT_DOUBLE_EQ(a.options.storm_ms, 4);
}

TEST(Analyzer, FromSpineByDirectionOrBySourceMac) {
  AnalyzerOptions by_mac;
  by_mac.storm_ms = 1;
  by_mac.spine_macs = {spine_mac};
  Feed mac_feed(by_mac);
  pause_scenario(mac_feed);
  Analysis a = mac_feed.result();
  EXPECT_TRUE(a.pfc.direction_known);
  EXPECT_EQ(a.pfc.from_spine.frames, 3u);  // two PFC frames and a PAUSE from the spine
  EXPECT_EQ(a.pfc.from_spine.xoff, 2u);
  EXPECT_DOUBLE_EQ(a.pfc.from_spine.paused_ns, 2000 + 512);
  EXPECT_EQ(a.pfc.from_spine.storms, 0u);
  ASSERT_EQ(a.pfc.storms.size(), 1u);
  EXPECT_FALSE(a.pfc.storms[0].from_spine);  // the leaf's storm

  AnalyzerOptions by_direction;
  by_direction.storm_ms = 1;
  by_direction.direction = MirrorDirection::spine_to_leaf;
  Feed direction_feed(by_direction);
  pause_scenario(direction_feed);
  a = direction_feed.result();
  EXPECT_TRUE(a.pfc.direction_known);
  EXPECT_EQ(a.pfc.from_spine.frames, 33u);  // every MAC control frame on this link
  EXPECT_EQ(a.pfc.from_spine.xoff, 32u);
  EXPECT_NEAR(a.pfc.from_spine.paused_ns, 29 * 100'000 + 335'539.2 + 2000 + 512, 1e-6);
  EXPECT_EQ(a.pfc.from_spine.storms, 1u);
  ASSERT_EQ(a.pfc.storms.size(), 1u);
  EXPECT_TRUE(a.pfc.storms[0].from_spine);

  AnalyzerOptions leaf_to_spine;
  leaf_to_spine.direction = MirrorDirection::leaf_to_spine;
  Feed leaf_feed(leaf_to_spine);
  pause_scenario(leaf_feed);
  a = leaf_feed.result();
  EXPECT_TRUE(a.pfc.direction_known);
  EXPECT_EQ(a.pfc.from_spine.frames, 0u);
  EXPECT_DOUBLE_EQ(a.pfc.from_spine.paused_ns, 0);
}

TEST(Analyzer, APauseInForceAtTheEndIsOngoingUnlessTheWindowOutlastsIt) {
  // XOFFs of 0xffff at 0, 100 and 200 us: in force until 535.5392 us, past the last frame.
  const auto feed_storm = [](Feed& feed) {
    for (std::uint64_t i = 0; i < 3; ++i)
      feed.add(build_pfc(0b1000, {0, 0, 0, 0xffff}, leaf_mac), T0 + i * 100'000);
  };
  AnalyzerOptions file;
  file.storm_ms = 0.1;
  Feed from_file(file);
  feed_storm(from_file);
  Analysis a = from_file.result();
  EXPECT_EQ(a.window_end_ns, T0 + 200'000);  // the last frame
  EXPECT_DOUBLE_EQ(a.pfc.priorities[3].paused_ns, 200'000);
  EXPECT_DOUBLE_EQ(a.pfc.priorities[3].pause_fraction, 1.0);
  ASSERT_EQ(a.pfc.storms.size(), 1u);
  EXPECT_TRUE(a.pfc.storms[0].ongoing);
  EXPECT_EQ(a.pfc.storms[0].end_ns, T0 + 200'000);

  AnalyzerOptions live = file;  // a live capture that started 1 ms early and stopped at 1 ms
  live.window_start_ns = T0 - 1'000'000;
  live.window_end_ns = T0 + 1'000'000;
  Feed from_live(live);
  feed_storm(from_live);
  a = from_live.result();
  EXPECT_EQ(a.window_start_ns, T0 - 1'000'000);
  EXPECT_EQ(a.window_end_ns, T0 + 1'000'000);
  EXPECT_NEAR(a.pfc.priorities[3].paused_ns, 535'539.2, 1e-6);
  EXPECT_NEAR(a.pfc.priorities[3].pause_fraction, 535'539.2 / 2'000'000, 1e-12);
  ASSERT_EQ(a.pfc.storms.size(), 1u);
  EXPECT_FALSE(a.pfc.storms[0].ongoing);
  EXPECT_EQ(a.pfc.storms[0].end_ns, T0 + 535'539);

  AnalyzerOptions inside = file;  // a window inside the frames' span widens nothing
  inside.window_start_ns = T0 + 50'000;
  inside.window_end_ns = T0 + 60'000;
  Feed from_inside(inside);
  feed_storm(from_inside);
  a = from_inside.result();
  EXPECT_EQ(a.window_start_ns, T0);
  EXPECT_EQ(a.window_end_ns, T0 + 200'000);
}

TEST(Analyzer, WindowWithoutFrames) {
  AnalyzerOptions o;
  o.window_start_ns = T0;
  o.window_end_ns = T0 + 5'000;
  Feed feed(o);
  const Analysis a = feed.result();
  EXPECT_EQ(a.window_start_ns, T0);
  EXPECT_EQ(a.window_end_ns, T0 + 5'000);
  EXPECT_DOUBLE_EQ(a.pfc.priorities[0].pause_fraction, 0);

  const Analysis none = Feed().result();
  EXPECT_EQ(none.window_start_ns, 0u);
  EXPECT_EQ(none.window_end_ns, 0u);
}

TEST(Analyzer, TimelineBins) {
  AnalyzerOptions o;
  o.bin_ms = 1;
  Feed feed(o);
  RoceFrame f;
  const std::uint64_t t0 = 1'700'000'000'000'000'000ull;
  const auto data = build(f);
  feed.add(data, t0);            // bin 0
  feed.add(data, t0 + 999'999);  // bin 0
  f.ecn = wire::ecn_ce;
  feed.add(build(f), t0 + 1'000'000);                               // bin 1, CE
  feed.add(build(cnp_frame(v4(2), v4(1), 0x101)), t0 + 3'500'000);  // bin 3
  feed.add(build_pfc(0b1000, {0, 0, 0, 9}), t0 + 3'600'000);        // bin 3, XOFF
  feed.add(build_pfc(0b1000, {}), t0 + 3'700'000);                  // XON: not counted
  feed.add(data, t0 - 5);  // stamped before the first record: bin 0
  const Analysis a = feed.result();
  ASSERT_EQ(a.timeline.bins.size(), 4u);
  EXPECT_EQ(a.timeline.bin_ms, 1u);
  EXPECT_EQ(a.timeline.start_ns, t0);
  EXPECT_EQ(a.timeline.bins[0].roce_bytes, 3 * data.size());
  EXPECT_EQ(a.timeline.bins[1].roce_bytes, data.size());
  EXPECT_EQ(a.timeline.bins[1].ecn_ce, 1u);
  EXPECT_EQ(a.timeline.bins[2].roce_bytes, 0u);
  EXPECT_EQ(a.timeline.bins[3].cnp, 1u);
  EXPECT_EQ(a.timeline.bins[3].pfc_xoff, 1u);
  EXPECT_EQ(a.first_ns, t0 - 5);
  EXPECT_EQ(a.last_ns, t0 + 3'700'000);
}

TEST(Analyzer, TimelineDoesNotGrowForABogusTimestamp) {
  AnalyzerOptions o;
  o.bin_ms = 1;
  o.max_bins = 1000;
  Feed feed(o);
  RoceFrame f;
  feed.add(build(f), 0);
  feed.add(build(f), 3'600'000'000'000ull);  // an hour later: bin 3.6 million
  const Analysis a = feed.result();
  EXPECT_EQ(a.timeline.bins.size(), 1u);
  EXPECT_EQ(a.timeline.frames_outside, 1u);
  EXPECT_EQ(a.roce.packets, 2u);  // still counted everywhere else
}

TEST(Analyzer, OtherLinkTypesAreCountedNotDecoded) {
  Feed feed;
  RoceFrame f;
  feed.add(build(f), 0, 65535, 113);  // Linux cooked capture
  const Analysis a = feed.result();
  EXPECT_EQ(a.frames, 1u);
  EXPECT_EQ(a.non_ethernet, 1u);
  EXPECT_EQ(a.roce.packets, 0u);
}

TEST(Analyzer, ManyFlowsGrowTheTable) {
  Feed feed;
  RoceFrame f;
  for (std::uint32_t qp = 0; qp < 5000; ++qp) {
    f.bth.dest_qp = qp;
    f.bth.psn = qp;
    feed.add(build(f), qp);
    feed.add(build(f), qp);  // the same PSN again: a retransmit on every flow
  }
  const Analysis a = feed.result();
  ASSERT_EQ(a.flows.size(), 5000u);
  for (const Flow& flow : a.flows) {
    ASSERT_EQ(flow.stats.packets, 2u);
    ASSERT_EQ(flow.stats.retransmits, 1u);
    ASSERT_EQ(flow.stats.first_ns, flow.key.dest_qp);
  }
}

// The report order, written independently of the analyzer's sort keys: descending bytes, then
// the addresses' bytes (IPv4 as ::ffff:a.b.c.d) and the QP ascending.
bool report_order(const Flow& x, const Flow& y) {
  if (x.stats.bytes != y.stats.bytes) return x.stats.bytes > y.stats.bytes;
  return std::tie(x.key.src.bytes, x.key.dst.bytes, x.key.dest_qp) <
         std::tie(y.key.src.bytes, y.key.dst.bytes, y.key.dest_qp);
}

// Flows with every kind of tie: equal bytes (payload sizes from a small set), the same source
// or destination with other peers, and address bytes that differ in their high and low places.
void add_random_flows(Feed& feed, std::mt19937& rng, bool with_v6) {
  std::uniform_int_distribution<int> octet(0, 3), qp(0, 5), payload(0, 2), packets(1, 3);
  for (int i = 0; i < 3000; ++i) {
    RoceFrame f;
    const auto a = static_cast<std::uint8_t>(octet(rng) * 70);
    const auto b = static_cast<std::uint8_t>(octet(rng) * 70);
    f.src = testing::v4(198, 18, a, static_cast<std::uint8_t>(octet(rng)));
    f.dst = testing::v4(198, 19, b, static_cast<std::uint8_t>(octet(rng)));
    if (with_v6 && octet(rng) == 0) {
      f.src = testing::doc_v6(static_cast<std::uint8_t>(octet(rng)));
      f.dst = testing::doc_v6(static_cast<std::uint8_t>(0x80 + octet(rng)));
    }
    f.bth.dest_qp = static_cast<std::uint32_t>(qp(rng)) << (octet(rng) * 6);
    f.payload_size = static_cast<std::uint32_t>(payload(rng)) * 64;
    for (int n = packets(rng); n > 0; --n) feed.add(build(f), 0);
  }
}

TEST(Analyzer, FlowsAreListedByBytesThenSourceDestinationAndQp) {
  // IPv4 flows alone take a sort of their own (one word per address pair); with an IPv6 flow
  // among them, all take the general one: both must give the same order.
  for (const bool with_v6 : {false, true}) {
    SCOPED_TRACE(with_v6 ? "IPv4 and IPv6" : "IPv4 only");
    std::mt19937 rng(with_v6 ? 7 : 3);
    Feed feed;
    add_random_flows(feed, rng, with_v6);
    const Analysis a = feed.result();
    ASSERT_GT(a.flows.size(), 500u);
    std::vector<Flow> expected = a.flows;
    std::shuffle(expected.begin(), expected.end(), rng);
    std::sort(expected.begin(), expected.end(), report_order);
    for (std::size_t i = 0; i < a.flows.size(); ++i) {
      ASSERT_EQ(a.flows[i].key, expected[i].key) << "flow " << i;
      ASSERT_EQ(a.flows[i].stats.bytes, expected[i].stats.bytes) << "flow " << i;
    }
    EXPECT_EQ(a.ipv6 > 0, with_v6);
  }
}

}  // namespace
}  // namespace rocehil::capture
