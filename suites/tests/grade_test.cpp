#include "rocehil/suites/grade.hpp"

#include <gtest/gtest.h>

namespace rocehil::suites {
namespace {

Threshold t(std::string_view text, Level level = Level::fail, int retry = 0) {
  Threshold out = *parse_threshold(text).threshold;
  out.level = level;
  out.retry = retry;
  return out;
}

TEST(Grade, TheWorstVerdictWinsFailOverErrorOverWarn) {
  const Values names{{"link_gbps", 100}};
  const std::vector<Threshold> all = {t("busbw_gbps >= 0.5 * link_gbps"),
                                      t("retransmits == 0", Level::warn), t("cnps <= 10")};
  EXPECT_EQ(grade(all, {{"busbw_gbps", 60}, {"retransmits", 0}, {"cnps", 3}}, names).verdict,
            Verdict::pass);
  EXPECT_EQ(grade(all, {{"busbw_gbps", 60}, {"retransmits", 5}, {"cnps", 3}}, names).verdict,
            Verdict::warn);
  // cnps missing: error, which beats the warning
  EXPECT_EQ(grade(all, {{"busbw_gbps", 60}, {"retransmits", 5}}, names).verdict, Verdict::error);
  // a failure beats the missing metric
  const CaseGrade g = grade(all, {{"busbw_gbps", 40}, {"retransmits", 5}}, names);
  EXPECT_EQ(g.verdict, Verdict::fail);
  ASSERT_EQ(g.results.size(), 3u);
  EXPECT_EQ(g.results[0].threshold, "busbw_gbps >= 0.5 * link_gbps");
  EXPECT_EQ(g.results[0].evaluation.verdict, Verdict::fail);
  EXPECT_EQ(g.results[1].evaluation.verdict, Verdict::warn);
  EXPECT_EQ(g.results[2].evaluation.verdict, Verdict::error);
  EXPECT_EQ(grade({}, {}, {}).verdict, Verdict::pass);
}

TEST(Grade, RetriesOnlyAFailureThatAllowsThem) {
  const std::vector<Threshold> ts = {t("busbw_gbps >= 50", Level::fail, 2),
                                     t("retransmits == 0", Level::fail, 0)};
  const CaseGrade slow = grade(ts, {{"busbw_gbps", 40}, {"retransmits", 0}}, {});
  EXPECT_TRUE(should_retry(ts, slow, 1));
  EXPECT_TRUE(should_retry(ts, slow, 2));
  EXPECT_FALSE(should_retry(ts, slow, 3));  // two retries spent
  // The failing threshold allows none.
  const CaseGrade lossy = grade(ts, {{"busbw_gbps", 60}, {"retransmits", 9}}, {});
  EXPECT_FALSE(should_retry(ts, lossy, 1));
  // A pass or a warning is never retried.
  EXPECT_FALSE(should_retry(ts, grade(ts, {{"busbw_gbps", 60}, {"retransmits", 0}}, {}), 1));
  const std::vector<Threshold> warn_only = {t("busbw_gbps >= 50", Level::warn, 3)};
  EXPECT_FALSE(should_retry(warn_only, grade(warn_only, {{"busbw_gbps", 1}}, {}), 1));
}

// Of a threshold's repeats the worst is the most severe verdict, then the value furthest on the
// failing side of the limit: the lowest for >=, the highest for <=.
TEST(Grade, TheWorstRepeatOfAThresholdIsTheFurthestOnTheFailingSide) {
  const auto result = [](std::string_view text, double measured) {
    return grade({t(text)}, {{"busbw_gbps", measured}, {"lat_p99_us", measured}}, {}).results[0];
  };
  EXPECT_DOUBLE_EQ(margin(Comparison::ge, 0.229, 0.3), 0.229 - 0.3);
  EXPECT_DOUBLE_EQ(margin(Comparison::le, 30, 10), -20);
  EXPECT_TRUE(worse(result("busbw_gbps >= 0.3", 0.229), result("busbw_gbps >= 0.3", 0.27)));
  EXPECT_FALSE(worse(result("busbw_gbps >= 0.3", 0.27), result("busbw_gbps >= 0.3", 0.229)));
  EXPECT_TRUE(worse(result("lat_p99_us <= 10", 30), result("lat_p99_us <= 10", 12)));
  // A failure is worse than any pass, however close the pass came.
  EXPECT_TRUE(worse(result("busbw_gbps >= 0.3", 0.299), result("busbw_gbps >= 0.3", 0.3)));
  EXPECT_FALSE(worse(result("busbw_gbps >= 0.3", 0.3), result("busbw_gbps >= 0.3", 0.1)));
  // Not measured is an error: worse than a warning, not as bad as a failure.
  const ThresholdResult missing = grade({t("cnps <= 1")}, {}, {}).results[0];
  EXPECT_TRUE(worse(missing, result("busbw_gbps >= 0.3", 1)));
  EXPECT_FALSE(worse(missing, result("busbw_gbps >= 0.3", 0.1)));
}

TEST(Grade, AnExpectedFailureIsTheGoodOutcome) {
  EXPECT_EQ(outcome_of(Verdict::fail, true), Outcome::expected_fail);
  EXPECT_EQ(outcome_of(Verdict::pass, true), Outcome::unexpected_pass);
  EXPECT_EQ(outcome_of(Verdict::warn, true), Outcome::unexpected_pass);
  EXPECT_EQ(outcome_of(Verdict::error, true), Outcome::error);
  EXPECT_EQ(outcome_of(Verdict::fail, false), Outcome::fail);
  EXPECT_EQ(outcome_of(Verdict::warn, false), Outcome::warn);
  EXPECT_FALSE(is_failure(Outcome::expected_fail));
  EXPECT_TRUE(is_failure(Outcome::unexpected_pass));
}

TEST(Grade, TheRunsExitCode) {
  using O = Outcome;
  EXPECT_EQ(run_exit_code({O::pass, O::warn, O::expected_fail}, false), 0);
  EXPECT_EQ(run_exit_code({O::pass, O::unexpected_pass}, false), 1);
  EXPECT_EQ(run_exit_code({O::error, O::fail}, false), 1);  // a failure outranks a lost host
  EXPECT_EQ(run_exit_code({O::pass, O::error}, false), 3);
  EXPECT_EQ(run_exit_code({O::pass, O::not_run}, false), 3);
  EXPECT_EQ(run_exit_code({O::fail}, true), 3);
  EXPECT_EQ(run_exit_code({}, false), 0);
}

}  // namespace
}  // namespace rocehil::suites
