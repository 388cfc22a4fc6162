#include "rocehil/suites/starvation.hpp"

#include <gtest/gtest.h>

namespace rocehil::suites {
namespace {

SchedulingReport idle() {
  SchedulingReport r;
  r.seconds = 2;
  r.cpus = 2;
  r.wakeups = 2000;
  r.wake_late_p50_us = 8;
  r.wake_late_p99_us = 40;
  r.wake_late_max_us = 90;
  r.thread_wait_max_ms = 4;  // 0.2% of 2 s
  r.threads_wait_ms = 6;
  r.steal_share = 0;
  r.run_queue_max = 2;
  return r;
}

// The run: the same cross-rack latency read 3.3 ms on a busy machine.
SchedulingReport starved() {
  SchedulingReport r = idle();
  r.wake_late_p50_us = 900;
  r.wake_late_p99_us = 2900;
  r.wake_late_max_us = 6000;
  r.thread_wait_max_ms = 60;  // 3% of 2 s: under the stall limit on its own
  r.run_queue_max = 7;
  return r;
}

Threshold threshold(const std::string& text) {
  const ParsedThreshold p = parse_threshold(text);
  EXPECT_TRUE(p.threshold) << p.error;
  return *p.threshold;
}

TEST(Starvation, ALatencyWithinReachOfTheWakeDelayIsFlaggedWithTheNumbers) {
  const auto reasons = starvation_reasons({{"h3", starved()}}, {{"lat_p50_us", 3300}});
  ASSERT_EQ(reasons.size(), 1u);
  EXPECT_EQ(reasons[0],
            "h3: the agent woke 2.9 ms late at p99 (its latency p50 was 3.3 ms); run queue 7 on "
            "2 CPUs");
}

TEST(Starvation, AnIdleHostIsNotFlagged) {
  EXPECT_TRUE(starvation_reasons({{"h1", idle()}, {"h3", idle()}}, {{"lat_p50_us", 32}}).empty());
  EXPECT_TRUE(starvation_reasons({{"h1", idle()}}, {{"busbw_gbps", 9.5}}).empty());
}

TEST(Starvation, AWakeDelaySmallBesideALongLatencyIsNotFlagged) {
  SchedulingReport r = starved();
  r.thread_wait_max_ms = 0;
  // 2.9 ms beside a 50 ms time per iteration: under 10% of it.
  EXPECT_TRUE(starvation_reasons({{"h2", r}}, {{"time_us", 50'000}}).empty());
  EXPECT_EQ(starvation_reasons({{"h2", r}}, {{"time_us", 20'000}}).size(), 1u);
}

TEST(Starvation, BandwidthIsFlaggedByTheShareOfTheTrafficTimeLostToTheCpu) {
  SchedulingReport r = idle();
  r.thread_wait_max_ms = 680;  // 34% of 2 s
  const auto reasons = starvation_reasons({{"h1", idle()}, {"h2", r}}, {{"busbw_gbps", 3.1}});
  ASSERT_EQ(reasons.size(), 1u);
  EXPECT_EQ(reasons[0], "h2: its busiest thread waited for a CPU 34% of the traffic time");
  SchedulingReport stolen = idle();
  stolen.steal_share = 0.12;
  EXPECT_EQ(starvation_reasons({{"h4", stolen}}, {{"algbw_gbps", 3.1}}),
            std::vector<std::string>{"h4: the hypervisor stole 12% of its CPUs' time"});
  r.thread_wait_max_ms = 180;  // 9%: under the limit
  EXPECT_TRUE(starvation_reasons({{"h2", r}}, {{"busbw_gbps", 3.1}}).empty());
}

TEST(Starvation, WhatTheKernelDidNotGiveFlagsNothing) {
  SchedulingReport r = idle();
  r.thread_wait_max_ms.reset();
  r.threads_wait_ms.reset();
  r.steal_share.reset();
  r.run_queue_max.reset();
  EXPECT_TRUE(starvation_reasons({{"h1", r}}, {{"busbw_gbps", 1}, {"lat_p50_us", 30}}).empty());
}

TEST(Starvation, CountsAloneAreNotTimingAndTheControllerNeedsMore) {
  EXPECT_TRUE(starvation_reasons({{"h3", starved()}}, {{"errors", 0}, {"cnps", 12}}).empty());
  // The controller's 2.9 ms lateness does not bend what the agents timed; 40 ms would.
  EXPECT_TRUE(
      starvation_reasons({{"controller", starved(), true}}, {{"lat_p50_us", 3300}}).empty());
  SchedulingReport c = starved();
  c.wake_late_p99_us = 40'000;
  c.wake_late_max_us = 50'000;
  c.thread_wait_max_ms = 600;
  EXPECT_EQ(starvation_reasons({{"controller", c, true}}, {{"busbw_gbps", 1}}),
            std::vector<std::string>{
                "controller: the controller woke 40 ms late at p99, so its requests to the agents "
                "came late; it waited for a CPU 30% of the traffic time; run queue 7 on 2 CPUs"});
}

TEST(Starvation, WhichWayItPushes) {
  EXPECT_EQ(starvation_pushes("lat_p99_us"), 1);
  EXPECT_EQ(starvation_pushes("perftest_t_typical_us"), 1);
  EXPECT_EQ(starvation_pushes("busbw_gbps"), -1);
  EXPECT_EQ(starvation_pushes("perftest_bw_average_gbps"), -1);
  EXPECT_EQ(starvation_pushes("cnps"), 0);
  EXPECT_EQ(starvation_pushes("nic_rx_pause"), 0);
}

TEST(Starvation, AFailTheWayStarvationPushesSaysSoAndAPassHoldsWithTheReasons) {
  const std::vector<Threshold> ts = {threshold("lat_p50_us <= 100"), threshold("errors == 0"),
                                     threshold("busbw_gbps >= 1")};
  const std::vector<std::string> why = {"h3: the agent woke 2.9 ms late at p99"};
  CaseGrade g = grade(ts, {{"lat_p50_us", 3300}, {"errors", 0}, {"busbw_gbps", 2}}, {});
  ASSERT_EQ(g.verdict, Verdict::fail);
  account_for_starvation(g, ts, why);
  EXPECT_EQ(g.verdict, Verdict::fail);  // a bisection still sees it as bad
  EXPECT_EQ(g.starved, why);
  EXPECT_EQ(g.results[0].evaluation.verdict, Verdict::fail);
  EXPECT_NE(g.results[0].evaluation.detail.find(
                "the case was CPU-starved, which may explain it (h3: the agent woke 2.9 ms late "
                "at p99)"),
            std::string::npos)
      << g.results[0].evaluation.detail;
  EXPECT_EQ(g.results[1].evaluation.verdict, Verdict::pass);
  EXPECT_EQ(g.results[2].evaluation.verdict, Verdict::pass);

  // A pass holds (starvation only makes latency worse), with the reasons beside it.
  CaseGrade passed = grade(ts, {{"lat_p50_us", 30}, {"errors", 0}, {"busbw_gbps", 2}}, {});
  account_for_starvation(passed, ts, why);
  EXPECT_EQ(passed.verdict, Verdict::pass);
  EXPECT_EQ(passed.starved, why);
  // A warning stays one, its detail saying the CPU may explain it.
  std::vector<Threshold> warn = {threshold("lat_p50_us <= 100")};
  warn[0].level = Level::warn;
  CaseGrade warned = grade(warn, {{"lat_p50_us", 3300}}, {});
  ASSERT_EQ(warned.verdict, Verdict::warn);
  account_for_starvation(warned, warn, why);
  EXPECT_EQ(warned.verdict, Verdict::warn);
  EXPECT_NE(warned.results[0].evaluation.detail.find("CPU-starved"), std::string::npos);

  // A fail starvation cannot explain is not said to be explained: errors are errors on any CPU.
  CaseGrade errors = grade(ts, {{"lat_p50_us", 30}, {"errors", 3}, {"busbw_gbps", 2}}, {});
  account_for_starvation(errors, ts, why);
  EXPECT_EQ(errors.verdict, Verdict::fail);
  EXPECT_EQ(errors.results[1].evaluation.detail.find("CPU-starved"), std::string::npos);

  // Unstarved: untouched.
  CaseGrade plain = grade(ts, {{"lat_p50_us", 3300}, {"errors", 0}, {"busbw_gbps", 2}}, {});
  account_for_starvation(plain, ts, {});
  EXPECT_EQ(plain.verdict, Verdict::fail);
  EXPECT_TRUE(plain.starved.empty());
}

}  // namespace
}  // namespace rocehil::suites
