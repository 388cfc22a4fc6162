// Stalls and recoveries read from senders' timelines built by hand, with their answers worked
// out from the samples.
#include "rocehil/run/timeline_metrics.hpp"

#include <gtest/gtest.h>

namespace rocehil::run {
namespace {

constexpr std::int64_t t0 = 1'800'000'000'000'000'000;

// A sender sampled every 10 ms for `ms`, moving `per_sample(i)` bytes in the sample ending at i.
template <class F>
agent::ProgressTimeline flow(int ms, F per_sample) {
  agent::ProgressTimeline t{.start_ns = t0, .period_us = 10'000, .t_us = {}, .bytes = {}};
  std::uint64_t total = 0;
  for (int i = 0; i * 10 <= ms; ++i) {
    if (i > 0) total += per_sample(i);
    t.t_us.push_back(static_cast<std::uint64_t>(i) * 10'000);
    t.bytes.push_back(total);
  }
  return t;
}

TEST(TimelineMetrics, TheLongestStallIsBetweenTheSamplesWhereTheBytesStoodStill) {
  // 12,500 bytes per 10 ms (10 Mbit/s), nothing from 1.00 s to 1.30 s.
  const auto t = flow(2000, [](int i) { return i > 100 && i <= 130 ? 0 : 12'500; });
  const auto stall = longest_stall(t);
  ASSERT_TRUE(stall);
  EXPECT_DOUBLE_EQ(stall->ms, 300);
  EXPECT_DOUBLE_EQ(stall->from_s, 1.0);
  // Steady: no stall longer than 0. Idle before its first byte is no stall.
  EXPECT_DOUBLE_EQ(longest_stall(flow(500, [](int) { return 100; }))->ms, 0);
  EXPECT_DOUBLE_EQ(longest_stall(flow(500, [](int i) { return i > 20 ? 100 : 0; }))->ms, 0);
  // Stalled to its end: the stall runs to the last sample.
  EXPECT_DOUBLE_EQ(longest_stall(flow(500, [](int i) { return i > 30 ? 0 : 100; }))->ms, 200);
  EXPECT_FALSE(longest_stall(flow(500, [](int) { return 0; })));
}

TEST(TimelineMetrics, RecoveryIsWhenThe100MsAfterAreBackAt90PercentOfTheSecondBefore) {
  // 10 Mbit/s; a link goes down at 2.0 s: nothing until 2.3 s, then half until 2.5 s, then
  // full again. The first 100 ms window at >= 90% begins at 2.48 s (two half samples and eight
  // full ones: 112,500 of 125,000 bytes, 90% exactly): 480 ms.
  const auto t = flow(4000, [](int i) {
    if (i > 200 && i <= 230) return 0;
    if (i > 230 && i <= 250) return 6'250;
    return 12'500;
  });
  const Recovery r = recovery_after(t, t0 + 2'000'000'000);
  ASSERT_TRUE(r.ms) << r.why;
  EXPECT_DOUBLE_EQ(*r.ms, 480);
  EXPECT_FALSE(r.never);
  EXPECT_NEAR(r.rate_before_gbps, 0.01, 1e-12);
  // 480 ms at 10 Mbit/s is 600,000 bytes; it delivered 18 half samples (2.30 to 2.48 s).
  EXPECT_NEAR(r.shortfall_bytes, 600'000 - 18 * 6'250, 1e-6);
  // A flow that never dipped recovered at once, nothing short.
  const Recovery steady =
      recovery_after(flow(4000, [](int) { return 12'500; }), t0 + 2'000'000'000);
  EXPECT_DOUBLE_EQ(*steady.ms, 0);
  EXPECT_DOUBLE_EQ(steady.shortfall_bytes, 0);
  // One that never came back: the time to its end, at least.
  const Recovery never =
      recovery_after(flow(3000, [](int i) { return i > 200 ? 0 : 12'500; }), t0 + 2'000'000'000);
  ASSERT_TRUE(never.ms);
  EXPECT_TRUE(never.never);
  EXPECT_DOUBLE_EQ(*never.ms, 1000);
  EXPECT_NEAR(never.shortfall_bytes, 1'250'000, 1e-6);  // a second at 10 Mbit/s, none of it
  EXPECT_EQ(never.why,
            "it stayed under 90% of its 0.01 Gbit/s from the event to its end, 1000 ms "
            "later");
  // An event after the flow ended, or before it began, is none of its business.
  EXPECT_FALSE(recovery_after(t, t0 + 5'000'000'000).ms);
  EXPECT_EQ(recovery_after(t, t0 + 5'000'000'000).why, "it was not sending across the event");
}

TEST(TimelineMetrics, TheCaseTakesTheWorstSenderAndSaysWhereAndAnEventlessCaseHasNoRecovery) {
  const std::vector<SenderTimeline> senders = {
      {"h1 (part roce)", flow(4000, [](int i) { return i > 200 && i <= 220 ? 0 : 100; })},
      {"h2 (part roce)", flow(4000, [](int i) { return i > 200 && i <= 260 ? 0 : 100; })}};
  nlohmann::json raw;
  const suites::Measured m =
      timeline_metrics(senders, {{"link_down l1-s1", t0 + 2'000'000'000}}, raw);
  EXPECT_DOUBLE_EQ(m.values.at("max_stall_ms"), 600);
  EXPECT_EQ(m.where.at("max_stall_ms"), "h2 (part roce): 600 ms from +2.00 s");
  // Back at 90% in the window that holds one still sample and nine moving ones.
  EXPECT_DOUBLE_EQ(m.values.at("recovery_ms"), 590);
  EXPECT_EQ(m.where.at("recovery_ms"), "h2 (part roce) after link_down l1-s1");
  EXPECT_EQ(raw["senders"].size(), 2u);
  EXPECT_EQ(raw["events"][0]["senders"][0]["recovery_ms"], 190.0);
  nlohmann::json quiet;
  const suites::Measured none = timeline_metrics(senders, {}, quiet);
  EXPECT_EQ(none.unmeasured.at("recovery_ms"), "no fabric event happened in this case (`events:`)");
  EXPECT_NE(timeline_metrics({}, {}, quiet).unmeasured.at("max_stall_ms").find("no sender"),
            std::string::npos);
}

TEST(TimelineMetrics, EveryFlowThatNeverCameBackIsNamedNotOnlyTheLongest) {
  // Static routes: two of three senders hashed onto the link that went down, dead from 2 s.
  const std::vector<SenderTimeline> senders = {
      {"h1", flow(3000, [](int i) { return i > 200 ? 0 : 100; })},
      {"h2", flow(3000, [](int) { return 100; })},
      {"h4", flow(3000, [](int i) { return i > 200 ? 0 : 100; })}};
  nlohmann::json raw;
  const suites::Measured m =
      timeline_metrics(senders, {{"link_down l1-s1", t0 + 2'000'000'000}}, raw);
  EXPECT_DOUBLE_EQ(m.values.at("recovery_ms"), 1000);
  EXPECT_EQ(m.where.at("recovery_ms"),
            "h1 after link_down l1-s1: at least that: it stayed under 90% of its 8e-05 Gbit/s "
            "from the event to its end, 1000 ms later; never back: h1 after link_down l1-s1, h4 "
            "after link_down l1-s1");
  EXPECT_EQ(raw["events"][0]["senders"][1]["recovered"], true);
  EXPECT_EQ(raw["events"][0]["senders"][2]["shortfall_bytes"], 10'000.0);
}

// Static routes with 8 QPs: l2 hashed one QP's ACKs onto the spine cut off from l1, and that QP
// waited 4.3 s (its ACK timeout) while the other seven kept the sender's total moving: the
// longest stall is the QP's, named with its peer.
TEST(TimelineMetrics, AQpTheFabricStoppedIsTheLongestStallWhenTheSendersTotalKeptMoving) {
  std::vector<SenderTimeline> senders = {
      {"h1",
       flow(3000, [](int i) { return i > 200 && i <= 205 ? 0 : 100; }),
       {{.qpn = 0x1a2, .peer = "h3", .ms = 40, .from_s = 0.5},
        {.qpn = 0x1a3, .peer = "h3", .ms = 4300, .from_s = 2.01}}},
      {"h2", flow(3000, [](int) { return 100; }), {}}};
  nlohmann::json raw;
  suites::Measured m = timeline_metrics(senders, {}, raw);
  EXPECT_DOUBLE_EQ(m.values.at("max_stall_ms"), 4300);
  EXPECT_EQ(m.where.at("max_stall_ms"), "h1: QP 0x1a3 to h3: 4300 ms from +2.01 s");
  EXPECT_EQ(raw["senders"][0]["max_stall_ms"], 50.0);  // the total's own stall: 5 samples
  EXPECT_EQ(raw["senders"][0]["max_qp_stall_ms"], 4300.0);
  EXPECT_FALSE(raw["senders"][1].contains("max_qp_stall_ms"));
  // QPs that waited less than the total stood still: the total's stall is the case's.
  senders[0].qp_stalls = {{.qpn = 0x1a2, .peer = "h3", .ms = 30, .from_s = 2.0}};
  m = timeline_metrics(senders, {}, raw);
  EXPECT_DOUBLE_EQ(m.values.at("max_stall_ms"), 50);
  EXPECT_EQ(m.where.at("max_stall_ms"), "h1: 50 ms from +2.00 s");
}

}  // namespace
}  // namespace rocehil::run
