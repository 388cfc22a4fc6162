// Which nodes --drain-failed drains: only those a failure names.
#include <gtest/gtest.h>

#include "rocehil/run/drain.hpp"

namespace rocehil::run {
namespace {

reports::CaseRecord case_with(const std::string& id, std::vector<std::string> hosts,
                              suites::Outcome outcome) {
  reports::CaseRecord c;
  c.id = id;
  c.hosts = std::move(hosts);
  c.outcome = outcome;
  c.attempts.emplace_back();
  return c;
}

reports::Attempt failed_threshold(const std::string& detail) {
  reports::Attempt a;
  suites::CaseGrade g;
  g.verdict = suites::Verdict::fail;
  g.results.push_back(
      {.threshold = "busbw_gbps > 40",
       .level = suites::Level::fail,
       .evaluation = {
           .verdict = suites::Verdict::fail, .measured = 12, .limit = 40, .detail = detail}});
  g.results.push_back(
      {.threshold = "time_cv <= 0.5",
       .level = suites::Level::warn,
       .evaluation = {
           .verdict = suites::Verdict::pass, .measured = 0.1, .limit = 0.5, .detail = "fine"}});
  a.grade = g;
  return a;
}

TEST(Drain, AnErrorBlamingAHostDrainsItAlone) {
  reports::RunRecord r;
  auto c = case_with("allreduce/qps=8", {"h1", "h2", "h3", "h4"}, suites::Outcome::error);
  c.attempts.back().error = reports::AttemptError{"h3", "traffic", "agent on h3 has gone"};
  r.cases.push_back(c);
  r.cases.push_back(case_with("p2p_bw", {"h1", "h3"}, suites::Outcome::pass));
  const DrainPlan plan = plan_drain(r, "nightly");
  ASSERT_EQ(plan.drain.size(), 1u);
  EXPECT_EQ(plan.drain[0].node, "h3");
  EXPECT_EQ(plan.drain[0].reason,
            "rocehil: nightly: allreduce/qps=8: traffic: agent on h3 has gone");
  EXPECT_TRUE(plan.not_drained.empty());
}

TEST(Drain, AFailedThresholdAcrossHostsNamesNoNodeAndIsListed) {
  reports::RunRecord r;
  auto c = case_with("allreduce/qps=1", {"h1", "h2"}, suites::Outcome::fail);
  c.attempts.back() = failed_threshold("busbw_gbps = 12, needs > 40");
  r.cases.push_back(c);
  const DrainPlan plan = plan_drain(r, "t");
  EXPECT_TRUE(plan.drain.empty());
  ASSERT_EQ(plan.not_drained.size(), 1u);
  EXPECT_EQ(plan.not_drained[0],
            "allreduce/qps=1: busbw_gbps = 12, needs > 40 names no single "
            "node of h1,h2");
}

TEST(Drain, AOneHostCaseDrainsItsHostAndEachNodeOnce) {
  reports::RunRecord r;
  auto one = case_with("loopback", {"h2"}, suites::Outcome::fail);
  one.attempts.back() = failed_threshold("busbw_gbps = 1, needs > 40");
  r.cases.push_back(one);
  auto again = case_with("other", {"h1", "h2"}, suites::Outcome::error);
  again.attempts.back().error = reports::AttemptError{"h2", "setup", "no device"};
  r.cases.push_back(again);
  const DrainPlan plan = plan_drain(r, "t");
  ASSERT_EQ(plan.drain.size(), 1u);  // h2 once, with its first failure
  EXPECT_EQ(plan.drain[0].reason, "rocehil: t: loopback: busbw_gbps = 1, needs > 40");
}

// The reason is the repeat that failed, not the last repeat, which passed.
TEST(Drain, TheReasonIsTheRepeatThatFailedNotTheLast) {
  reports::RunRecord r;
  auto c = case_with("loopback", {"h2"}, suites::Outcome::fail);
  c.attempts.back() = failed_threshold("busbw_gbps = 1, needs > 40");
  reports::Attempt passed = failed_threshold("busbw_gbps = 50, needs > 40");
  passed.repeat = 1;
  passed.grade->verdict = suites::Verdict::pass;
  passed.grade->results[0].evaluation.verdict = suites::Verdict::pass;
  passed.grade->results[0].evaluation.measured = 50;
  c.attempts.push_back(passed);
  r.cases.push_back(c);
  const DrainPlan plan = plan_drain(r, "t");
  ASSERT_EQ(plan.drain.size(), 1u);
  EXPECT_EQ(plan.drain[0].reason, "rocehil: t: loopback: busbw_gbps = 1, needs > 40");
}

TEST(Drain, ExpectedFailuresPassesAndHostlessErrorsDrainNothing) {
  reports::RunRecord r;
  r.cases.push_back(case_with("pfc_storm", {"h1", "h2"}, suites::Outcome::expected_fail));
  r.cases.push_back(case_with("p2p", {"h1", "h2"}, suites::Outcome::pass));
  r.cases.push_back(case_with("skipped", {"h1"}, suites::Outcome::not_run));
  auto hostless = case_with("incast", {"h1", "h2", "h3"}, suites::Outcome::error);
  hostless.attempts.back().error = reports::AttemptError{"", "analysis", "capture file empty"};
  r.cases.push_back(hostless);
  const DrainPlan plan = plan_drain(r, "t");
  EXPECT_TRUE(plan.drain.empty());
  ASSERT_EQ(plan.not_drained.size(), 1u);
  EXPECT_NE(plan.not_drained[0].find("incast: analysis: capture file empty"), std::string::npos);
}

TEST(Drain, HostsThePreflightCouldNotUseAndAgentsThatNeverDialedInAreDrainedEachForItsReason) {
  // run.json's preflight as a run that stopped before its cases writes it.
  reports::RunRecord r;
  r.preflight = nlohmann::json::parse(R"({
    "hosts": [
      {"name": "h1", "verdict": "ok", "checks": []},
      {"name": "h2", "verdict": "unreachable", "unreachable": "ssh: connect to host h2: timed out",
       "checks": []},
      {"name": "h3", "verdict": "failed", "checks": [
        {"name": "rocehil", "status": "ok", "detail": "0.9.0"},
        {"name": "mtu", "status": "fail", "detail": "1500, the inventory says 9000"},
        {"name": "pfc", "status": "fail", "detail": "priority 3 off"}]},
      {"name": "h4", "verdict": "soft only", "checks": []}],
    "agents": {"joined": 1, "missing": [
      {"host": "h4", "why": "its agent started but did not dial in to 10.0.0.1:7000 within 60 s"}]}
  })");
  const DrainPlan plan = plan_drain(r, "nightly");
  ASSERT_EQ(plan.drain.size(), 3u);
  EXPECT_EQ(plan.drain[0].node, "h2");
  EXPECT_EQ(plan.drain[0].reason,
            "rocehil: nightly: preflight: unreachable: ssh: connect to host h2: timed out");
  EXPECT_EQ(plan.drain[1].node, "h3");
  EXPECT_EQ(plan.drain[1].reason,
            "rocehil: nightly: preflight: mtu: 1500, the inventory says 9000; pfc: priority 3 off");
  EXPECT_EQ(plan.drain[2].node, "h4");
  EXPECT_EQ(plan.drain[2].reason,
            "rocehil: nightly: its agent did not dial in: its agent started but did not dial in "
            "to 10.0.0.1:7000 within 60 s");
  EXPECT_TRUE(plan.not_drained.empty());
}

TEST(Drain, APreflightOfAnotherShapeDrainsNothingAndDoesNotThrow) {
  reports::RunRecord r;
  r.preflight = nlohmann::json::parse(
      R"({"hosts": [{"verdict": 3}, "h1", {"name": "h2"}], "agents": {"missing": [7]}})");
  const DrainPlan plan = plan_drain(r, "t");
  EXPECT_TRUE(plan.drain.empty());
}

}  // namespace
}  // namespace rocehil::run
