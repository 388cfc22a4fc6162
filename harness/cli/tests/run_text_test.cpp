// What `rocehil run` prints as cases end and at the end.
#include "runs/run_text.hpp"

#include <gtest/gtest.h>

namespace rocehil::cli {
namespace {

reports::CaseRecord graded(std::string id, std::string_view threshold, suites::Values metrics,
                           bool expect_fail = false) {
  reports::CaseRecord c;
  c.id = std::move(id);
  c.expect_fail = expect_fail;
  reports::Attempt a;
  a.seconds = 2.25;
  a.metrics = std::move(metrics);
  a.grade = suites::grade({suites::parse_threshold(threshold).threshold.value()}, a.metrics, {});
  c.attempts.push_back(a);
  c.outcome = reports::outcome_of(c);
  return c;
}

TEST(RunText, ACaseLineSaysWhatFailedAndByHowMuch) {
  const auto c = graded("allreduce/qps=8", "busbw_gbps >= 0.5", {{"busbw_gbps", 0.25}});
  EXPECT_EQ(case_line(c),
            "  allreduce/qps=8                FAIL                 busbw 0.25 Gbit/s      2.2 s\n"
            "      fail busbw_gbps >= 0.5: busbw_gbps = 0.25, needs >= 0.5\n");
  const auto ok = graded("p2p_lat", "lat_p99_us <= 20", {{"lat_p99_us", 14.25}});
  EXPECT_EQ(case_line(ok),
            "  p2p_lat                        pass                 lat p99 14.25 us       2.2 s\n");
}

// A point-to-point bw test measures a payload rate: it is not labelled a bus bandwidth.
// A starved case is never passed in silence: its reasons are under it and in the table.
TEST(RunText, AStarvedCaseSaysWhyItsNumbersMayBeTheSchedulers) {
  auto c = graded("p2p_lat", "lat_p99_us <= 20000", {{"lat_p99_us", 3400}});
  const std::string why = "h3: the agent woke 2.9 ms late at p99 (its latency p50 was 3.3 ms)";
  c.attempts[0].cpu_starved = {why};
  suites::account_for_starvation(*c.attempts[0].grade,
                                 {suites::parse_threshold("lat_p99_us <= 20000").threshold.value()},
                                 c.attempts[0].cpu_starved);
  c.outcome = reports::outcome_of(c);
  EXPECT_EQ(c.outcome, suites::Outcome::pass);  // it held, on a starved host: said below
  EXPECT_NE(case_line(c).find(
                "      CPU-starved (its timing numbers may be the scheduler's): " + why + "\n"),
            std::string::npos)
      << case_line(c);
  reports::RunRecord run;
  run.suite_name = "smoke";
  run.cases = {c};
  EXPECT_NE(verdict_table(run, "/r").find("CPU-starved: h3: the agent woke 2.9 ms late"),
            std::string::npos)
      << verdict_table(run, "/r");
}

TEST(RunText, APointToPointRateIsBwNotBusbw) {
  auto c = graded("p2p_bw", "busbw_gbps > 0", {{"busbw_gbps", 0.5}});
  c.workload = "bw";
  EXPECT_NE(case_line(c).find(" bw 0.5 Gbit/s "), std::string::npos) << case_line(c);
  EXPECT_EQ(case_line(c).find("busbw 0.5"), std::string::npos);
  c.workload = "allreduce";
  EXPECT_NE(case_line(c).find("busbw 0.5 Gbit/s"), std::string::npos);
}

// A switch that gave no counters is said on the terminal, per case and at the end, not only inside
// report.html.
TEST(RunText, ASilentSwitchIsSaidPerCaseAndAtTheEnd) {
  auto c = graded("allreduce/qps=1", "busbw_gbps > 0", {{"busbw_gbps", 0.5}});
  c.attempts.back().raw["switches"] = {
      {{"switch", "s1"}, {"answered", true}, {"ports", nlohmann::json::array()}},
      {{"switch", "l1"}, {"answered", false}, {"error", "Timeout (no answer from 198.19.0.2)"}}};
  EXPECT_NE(case_line(c).find("      switch l1: Timeout (no answer from 198.19.0.2) (no counters: "
                              "its switch_* metrics are absent)\n"),
            std::string::npos)
      << case_line(c);
  EXPECT_EQ(case_line(c).find("switch s1"), std::string::npos);
  reports::RunRecord run;
  run.suite_name = "smoke";
  run.cases = {c, c};
  EXPECT_NE(verdict_table(run, "r").find("switches that gave no counters: l1 (2 cases)\n"),
            std::string::npos)
      << verdict_table(run, "r");
}

TEST(RunText, KeptCapturesAreCountedWithWhereAndTheOnesNotKeptSayWhy) {
  auto c = graded("incast", "busbw_gbps > 1", {{"busbw_gbps", 0.5}});
  c.attempts.back().captures_kept = {
      {.point = "s1-mirror", .host = "cap", .files = {"a", "b"}, .bytes = 2500000, .not_kept = ""},
      {.point = "s2-mirror", .host = "cap", .files = {}, .bytes = 0, .not_kept = "too big"}};
  reports::RunRecord run;
  run.suite_name = "smoke";
  run.cases = {c};
  const std::string text = verdict_table(run, "reports/r1");
  EXPECT_NE(text.find("captures kept: 2 files, 2.5 MB in reports/r1/captures\n"
                      "  incast s2-mirror: not kept: too big\n"),
            std::string::npos)
      << text;
  run.cases[0].attempts.back().captures_kept.clear();
  EXPECT_EQ(verdict_table(run, "reports/r1").find("captures kept"), std::string::npos);
}

TEST(RunText, AnErrorNamesTheHostAndPhaseAndShowsNoNumbers) {
  reports::CaseRecord c;
  c.id = "alltoall";
  reports::Attempt a;
  a.metrics = {{"busbw_gbps", 0}};
  a.error = reports::AttemptError{"h3", "traffic", "agent on h3: it exited"};
  c.attempts = {a, a};
  c.outcome = reports::outcome_of(c);
  EXPECT_EQ(case_line(c),
            "  alltoall                       ERROR                                       0.0 s (1 "
            "retry after a failure)\n      h3: traffic: agent on h3: it exited\n");
}

// Five repeats from 0.229 to 0.395 Gbit/s, the last the highest and only the second failing:
// the line gives their median, named so, and the failure quotes the second repeat. Nothing was
// retried, so nothing says attempts.
reports::CaseRecord five_repeats() {
  const suites::Threshold t = suites::parse_threshold("busbw_gbps >= 0.25").threshold.value();
  reports::CaseRecord c;
  c.id = "p2p_bw";
  c.workload = "bw";
  int repeat = 0;
  for (const double v : {0.31, 0.229, 0.35, 0.27, 0.395}) {
    reports::Attempt a;
    a.repeat = repeat++;
    a.seconds = 2;
    a.metrics = {{"busbw_gbps", v}};
    a.grade = suites::grade({t}, a.metrics, {});
    c.attempts.push_back(a);
  }
  c.outcome = reports::outcome_of(c);
  return c;
}

TEST(RunText, RepeatsShowTheirMedianAndAFailureQuotesItsWorstRepeat) {
  const reports::CaseRecord c = five_repeats();
  EXPECT_EQ(case_line(c),
            "  p2p_bw                         FAIL                 bw 0.31 Gbit/s, median of 5 "
            "repeats (0.229 to 0.395) 10.0 s\n"
            "      fail busbw_gbps >= 0.25: failed in 1 of 5 repeats; the worst, repeat 2: "
            "busbw_gbps = 0.229, needs >= 0.25\n");
  reports::RunRecord run;
  run.suite_name = "smoke";
  run.cases = {c};
  const std::string table = verdict_table(run, "r");
  EXPECT_NE(table.find("bw 0.31 Gbit/s, median of 5 repeats (0.229 to 0.395)"), std::string::npos)
      << table;
  EXPECT_NE(table.find("the worst, repeat 2: busbw_gbps = 0.229"), std::string::npos) << table;
  EXPECT_EQ(table.find("0.395 Gbit"), std::string::npos) << table;
}

TEST(RunText, TheVerdictTableEndsWithTheSummaryAndTheReport) {
  reports::RunRecord run;
  run.suite_name = "smoke";
  run.cases.push_back(graded("p2p_bw", "busbw_gbps > 0", {{"busbw_gbps", 0.5}}));
  run.cases.push_back(graded("pfc_storm", "pfc_storms == 0", {{"pfc_storms", 1}}, true));
  const std::string text = verdict_table(run, "reports/r1");
  EXPECT_NE(text.find("p2p_bw     pass"), std::string::npos) << text;
  EXPECT_NE(text.find("pfc_storm  failed as expected"), std::string::npos) << text;
  EXPECT_NE(text.find("fail pfc_storms == 0: pfc_storms = 1, needs == 0"), std::string::npos);
  EXPECT_NE(text.find("\nsmoke: 1 passed, 1 failed as expected\n"), std::string::npos) << text;
  EXPECT_NE(
      text.find("report: reports/r1/report.html (reports/r1/run.json, reports/r1/junit.xml)\n"),
      std::string::npos);
}

}  // namespace
}  // namespace rocehil::cli
