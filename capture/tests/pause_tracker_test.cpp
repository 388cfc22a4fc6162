// Pause accounting by hand: every expected number below is worked out from the 802.1Qbb rules in
// pause_tracker.hpp (one quantum = 512 bit times: 5.12 ns at 100G, 512 ns at 1G), not from the
// code. Timestamps sit at an epoch-sized T0 so that the tracker's offsets are what is tested.

#include "analysis/pause_tracker.hpp"

#include <gtest/gtest.h>

namespace rocehil::capture {
namespace {

constexpr std::uint64_t T0 = 1'700'000'000'000'000'000ull;
constexpr MacAddress mac_a{0x02, 0, 0, 0, 0, 0x0a};
constexpr MacAddress mac_b{0x02, 0, 0, 0, 0, 0x0b};

AnalyzerOptions at_gbps(double gbps, double storm_ms = 100) {
  AnalyzerOptions o;
  o.link_gbps = gbps;
  o.storm_ms = storm_ms;
  return o;
}

// One PFC frame from `mac` with `quanta` for `priority` only.
void pfc(PauseTracker& t, std::uint64_t ts, const MacAddress& mac, std::size_t priority,
         std::uint16_t quanta) {
  std::array<std::uint8_t, 16> wire{};
  wire[2 * priority] = static_cast<std::uint8_t>(quanta >> 8);
  wire[2 * priority + 1] = static_cast<std::uint8_t>(quanta);
  t.pfc(T0 + ts, mac.data(), static_cast<std::uint16_t>(1u << priority), wire.data());
}

PauseTracker::Totals totals(const PauseTracker& t, std::uint64_t start, std::uint64_t end) {
  return t.totals(T0 + start, T0 + end);
}

TEST(PauseTracker, OneXoffPausesForItsQuanta) {
  PauseTracker t(at_gbps(100));
  pfc(t, 1000, mac_a, 3, 1000);  // 1000 x 5.12 ns
  const auto r = totals(t, 1000, 1'000'000);
  EXPECT_DOUBLE_EQ(r.classes[3].paused_ns, 5120);
  EXPECT_DOUBLE_EQ(r.classes[3].longest_pause_ns, 5120);
  EXPECT_EQ(r.classes[3].storms, 0u);
  EXPECT_DOUBLE_EQ(r.classes[2].paused_ns, 0);
  EXPECT_TRUE(r.storms.empty());
}

TEST(PauseTracker, QuantaToTimeAtEachLinkSpeed) {
  for (const auto& [gbps, ns] : {std::pair{100.0, 335'539.2}, std::pair{400.0, 83'884.8},
                                 std::pair{25.0, 1'342'156.8}, std::pair{1.0, 33'553'920.0}}) {
    PauseTracker t(at_gbps(gbps));
    pfc(t, 0, mac_a, 0, 0xffff);
    EXPECT_NEAR(totals(t, 0, 1'000'000'000).classes[0].paused_ns, ns, 1e-6) << gbps << " Gb/s";
  }
}

TEST(PauseTracker, RefreshBeforeExpiryIsOneContinuousPause) {
  PauseTracker t(at_gbps(100));
  pfc(t, 0, mac_a, 3, 1000);     // until 5120
  pfc(t, 5000, mac_a, 3, 1000);  // before 5120: until 10120
  const auto r = totals(t, 0, 1'000'000);
  EXPECT_DOUBLE_EQ(r.classes[3].paused_ns, 10120);
  EXPECT_DOUBLE_EQ(r.classes[3].longest_pause_ns, 10120);
}

TEST(PauseTracker, ASmallerRefreshShortensThePause) {
  PauseTracker t(at_gbps(100));
  pfc(t, 0, mac_a, 3, 1000);  // until 5120
  pfc(t, 100, mac_a, 3, 10);  // the timer reloads: until 100 + 51.2
  EXPECT_DOUBLE_EQ(totals(t, 0, 1'000'000).classes[3].paused_ns, 151.2);
}

TEST(PauseTracker, RefreshAfterExpiryIsTwoPauses) {
  PauseTracker t(at_gbps(100));
  pfc(t, 0, mac_a, 3, 1000);     // [0, 5120)
  pfc(t, 6000, mac_a, 3, 1000);  // [6000, 11120)
  auto r = totals(t, 0, 1'000'000);
  EXPECT_DOUBLE_EQ(r.classes[3].paused_ns, 10240);
  EXPECT_DOUBLE_EQ(r.classes[3].longest_pause_ns, 5120);

  PauseTracker at_expiry(at_gbps(100));
  pfc(at_expiry, 0, mac_a, 3, 1000);     // [0, 5120)
  pfc(at_expiry, 5120, mac_a, 3, 1000);  // exactly at the expiry: a new pause [5120, 10240)
  r = totals(at_expiry, 0, 1'000'000);
  EXPECT_DOUBLE_EQ(r.classes[3].paused_ns, 10240);
  EXPECT_DOUBLE_EQ(r.classes[3].longest_pause_ns, 5120);
}

TEST(PauseTracker, XonEndsThePauseEarly) {
  PauseTracker t(at_gbps(100));
  pfc(t, 0, mac_a, 3, 1000);  // until 5120
  pfc(t, 2000, mac_a, 3, 0);  // XON at 2000
  pfc(t, 3000, mac_a, 3, 0);  // XON with nothing paused: nothing
  const auto r = totals(t, 0, 1'000'000);
  EXPECT_DOUBLE_EQ(r.classes[3].paused_ns, 2000);
  EXPECT_DOUBLE_EQ(r.classes[3].longest_pause_ns, 2000);
}

TEST(PauseTracker, SendersPauseIndependently) {
  PauseTracker t(at_gbps(100));
  pfc(t, 0, mac_a, 3, 1000);     // A: [0, 5120)
  pfc(t, 5000, mac_b, 3, 1000);  // B: [5000, 10120), not a refresh of A's pause
  pfc(t, 6000, mac_b, 5, 0);     // B's XON on another priority ends nothing
  pfc(t, 7000, mac_a, 3, 0);     // A's XON after A's expiry: A's pause ended at 5120
  const auto r = totals(t, 0, 1'000'000);
  EXPECT_DOUBLE_EQ(r.classes[3].paused_ns, 5120 + 5120);
  EXPECT_DOUBLE_EQ(r.classes[3].longest_pause_ns, 5120);
  EXPECT_DOUBLE_EQ(r.classes[5].paused_ns, 0);
}

TEST(PauseTracker, AStormIsLongerThanStormMsNotEqual) {
  // 1G: 65535 quanta hold for 33.5 ms, so the XONs decide the lengths: 1 ms and 1 ms + 1 ns.
  PauseTracker t(at_gbps(1, 1));
  pfc(t, 0, mac_a, 2, 0xffff);
  pfc(t, 0, mac_b, 2, 0xffff);
  pfc(t, 1'000'000, mac_a, 2, 0);
  pfc(t, 1'000'001, mac_b, 2, 0);
  const auto r = totals(t, 0, 5'000'000);
  EXPECT_EQ(r.classes[2].storms, 1u);
  ASSERT_EQ(r.storms.size(), 1u);
  const PfcStorm& s = r.storms[0];
  EXPECT_EQ(s.priority, 2);
  EXPECT_EQ(s.source_mac, mac_b);
  EXPECT_EQ(s.start_ns, T0);
  EXPECT_EQ(s.end_ns, T0 + 1'000'001);
  EXPECT_DOUBLE_EQ(s.duration_ns, 1'000'001);
  EXPECT_FALSE(s.ongoing);
  EXPECT_FALSE(s.from_spine);
  EXPECT_DOUBLE_EQ(r.classes[2].longest_pause_ns, 1'000'001);
}

TEST(PauseTracker, ARefreshedPauseBecomesAStorm) {
  // 100G, 0xffff quanta (335.5392 us) every 100 us for 20 ms, storm_ms 10: one storm from the
  // first XOFF to the last one's expiry.
  PauseTracker t(at_gbps(100, 10));
  for (std::uint64_t i = 0; i < 200; ++i) pfc(t, i * 100'000, mac_a, 3, 0xffff);
  const auto r = totals(t, 0, 1'000'000'000);
  const double expected = 199 * 100'000 + 335'539.2;
  EXPECT_NEAR(r.classes[3].paused_ns, expected, 1e-6);
  ASSERT_EQ(r.storms.size(), 1u);
  EXPECT_EQ(r.storms[0].start_ns, T0);
  EXPECT_EQ(r.storms[0].end_ns, T0 + 20'235'539);  // 20'235'539.2 to the nearest ns
  EXPECT_NEAR(r.storms[0].duration_ns, expected, 1e-6);
}

TEST(PauseTracker, PauseInForceAtTheWindowEndEndsThereAndIsOngoing) {
  PauseTracker t(at_gbps(1, 1));
  pfc(t, 0, mac_a, 4, 0xffff);  // until 33.55392 ms
  pfc(t, 0, mac_b, 4, 100);     // until 51.2 us: over before the window ends
  const auto r = totals(t, 0, 2'000'000);
  EXPECT_DOUBLE_EQ(r.classes[4].paused_ns, 2'000'000 + 51'200);
  ASSERT_EQ(r.storms.size(), 1u);
  EXPECT_TRUE(r.storms[0].ongoing);
  EXPECT_EQ(r.storms[0].source_mac, mac_a);
  EXPECT_EQ(r.storms[0].end_ns, T0 + 2'000'000);

  // The tracker is unchanged by totals(): a later window sees the pause run to its expiry.
  const auto later = totals(t, 0, 100'000'000);
  EXPECT_DOUBLE_EQ(later.classes[4].paused_ns, 33'553'920 + 51'200);
  ASSERT_EQ(later.storms.size(), 1u);
  EXPECT_FALSE(later.storms[0].ongoing);
  EXPECT_EQ(later.storms[0].end_ns, T0 + 33'553'920);
}

TEST(PauseTracker, OpenPausesAreClippedToTheWindow) {
  PauseTracker t(at_gbps(100));
  pfc(t, 1000, mac_a, 1, 1000);  // [1000, 6120)
  EXPECT_DOUBLE_EQ(totals(t, 3000, 4000).classes[1].paused_ns, 1000);
  EXPECT_DOUBLE_EQ(totals(t, 0, 1000).classes[1].paused_ns, 0);
  EXPECT_DOUBLE_EQ(totals(t, 0, 2000).classes[1].paused_ns, 1000);
}

TEST(PauseTracker, Pause8023xIsTheNinthClass) {
  PauseTracker t(at_gbps(1, 1));
  t.pause(T0, mac_a.data(), 0xffff);            // until 33.55392 ms
  t.pause(T0 + 3'000'000, mac_a.data(), 0);     // XON at 3 ms
  t.pause(T0 + 4'000'000, mac_a.data(), 1000);  // 512 us
  pfc(t, 4'100'000, mac_a, 0, 0);               // PFC XON leaves 802.3x alone
  const auto r = totals(t, 0, 10'000'000);
  EXPECT_DOUBLE_EQ(r.classes[PauseTracker::pause_8023x].paused_ns, 3'000'000 + 512'000);
  EXPECT_DOUBLE_EQ(r.classes[PauseTracker::pause_8023x].longest_pause_ns, 3'000'000);
  EXPECT_EQ(r.classes[PauseTracker::pause_8023x].storms, 1u);
  ASSERT_EQ(r.storms.size(), 1u);
  EXPECT_EQ(r.storms[0].priority, 8);
  for (std::size_t p = 0; p < 8; ++p) EXPECT_DOUBLE_EQ(r.classes[p].paused_ns, 0) << p;
}

TEST(PauseTracker, StormsAreOrderedByStart) {
  PauseTracker t(at_gbps(1, 1));
  pfc(t, 0, mac_a, 6, 0xffff);
  pfc(t, 10, mac_b, 1, 0xffff);
  pfc(t, 2'000'000, mac_b, 1, 0);  // B's storm ends first
  pfc(t, 3'000'000, mac_a, 6, 0);
  const auto r = totals(t, 0, 5'000'000);
  ASSERT_EQ(r.storms.size(), 2u);
  EXPECT_EQ(r.storms[0].source_mac, mac_a);
  EXPECT_EQ(r.storms[0].priority, 6);
  EXPECT_EQ(r.storms[1].source_mac, mac_b);
  EXPECT_EQ(r.storms[1].start_ns, T0 + 10);
  EXPECT_EQ(r.storms[1].end_ns, T0 + 2'000'000);
}

TEST(PauseTracker, AFrameStampedEarlierCountsAtTheLatestTime) {
  PauseTracker t(at_gbps(100));
  pfc(t, 10'000, mac_a, 3, 1000);  // [10000, 15120)
  pfc(t, 9'000, mac_a, 3, 0);      // reordered XON: taken at 10000, the pause lasted 0
  pfc(t, 20'000, mac_a, 3, 1000);  // [20000, 25120)
  pfc(t, 19'000, mac_a, 3, 1000);  // reordered refresh: taken at 20000, same expiry
  const auto r = totals(t, 0, 1'000'000);
  EXPECT_DOUBLE_EQ(r.classes[3].paused_ns, 5120);
}

TEST(PauseTracker, FromSpineBySourceMacOrByDirection) {
  AnalyzerOptions by_mac = at_gbps(1, 1);
  by_mac.spine_macs = {mac_b};
  AnalyzerOptions by_direction = at_gbps(1, 1);
  by_direction.direction = MirrorDirection::spine_to_leaf;
  AnalyzerOptions leaf = at_gbps(1, 1);
  leaf.direction = MirrorDirection::leaf_to_spine;
  for (const auto& [options, a_spine, b_spine] :
       {std::tuple{by_mac, false, true}, std::tuple{by_direction, true, true},
        std::tuple{leaf, false, false}}) {
    PauseTracker t(options);
    pfc(t, 0, mac_a, 3, 0xffff);         // 33.5 ms
    pfc(t, 0, mac_b, 3, 1000);           // 512 us
    pfc(t, 100, mac_b, 3, 1000);         // refresh: 100 ns + 512 us
    t.pause(T0 + 200, mac_b.data(), 0);  // a PAUSE XON from B
    const auto r = totals(t, 0, 1'000'000'000);
    const double a_paused = 33'553'920, b_paused = 100 + 512'000;
    EXPECT_EQ(r.from_spine.frames, (a_spine ? 1u : 0u) + (b_spine ? 3u : 0u));
    EXPECT_EQ(r.from_spine.xoff, (a_spine ? 1u : 0u) + (b_spine ? 2u : 0u));
    EXPECT_DOUBLE_EQ(r.from_spine.paused_ns, (a_spine ? a_paused : 0) + (b_spine ? b_paused : 0));
    EXPECT_EQ(r.from_spine.storms, a_spine ? 1u : 0u);
    ASSERT_EQ(r.storms.size(), 1u);
    EXPECT_EQ(r.storms[0].from_spine, a_spine);
  }
}

TEST(PauseTracker, ManyClassesInOneFrame) {
  PauseTracker t(at_gbps(100));
  std::array<std::uint8_t, 16> wire{};
  wire[0] = 0x03, wire[1] = 0xe8;                // priority 0: 1000
  wire[14] = 0x00, wire[15] = 0x0a;              // priority 7: 10
  wire[6] = 0xff, wire[7] = 0xff;                // priority 3: its bit is clear, ignored
  t.pfc(T0, mac_a.data(), 0xff81, wire.data());  // high byte of the vector: unused
  const auto r = t.totals(T0, T0 + 1'000'000);
  EXPECT_DOUBLE_EQ(r.classes[0].paused_ns, 5120);
  EXPECT_DOUBLE_EQ(r.classes[7].paused_ns, 51.2);
  EXPECT_DOUBLE_EQ(r.classes[3].paused_ns, 0);
}

TEST(PauseTracker, NothingSeenNothingPaused) {
  PauseTracker t(at_gbps(100));
  const auto r = t.totals(0, 0);
  for (const auto& c : r.classes) EXPECT_DOUBLE_EQ(c.paused_ns, 0);
  EXPECT_TRUE(r.storms.empty());
}

}  // namespace
}  // namespace rocehil::capture
