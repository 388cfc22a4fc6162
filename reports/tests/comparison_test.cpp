#include "rocehil/reports/comparison.hpp"

#include <gtest/gtest.h>

namespace rocehil::reports {
namespace {

History::RunSnapshot snapshot(const std::string& id, std::vector<double> busbw,
                              const std::string& outcome = "pass") {
  History::RunSnapshot s;
  s.row.run_id = id;
  s.row.suite = "nightly";
  s.cases.push_back({"allreduce/qps=8", "allreduce", "allreduce", outcome});
  s.samples["allreduce/qps=8"]["busbw_gbps"] = std::move(busbw);
  s.samples["allreduce/qps=8"]["errors"] = {0, 0, 0, 0, 0};
  s.settings = {{"h1 eth1 pfc", "3"}};
  return s;
}

TEST(Comparison, ATwentyPercentDropOverFiveRepeatsIsSignificant) {
  const auto a = snapshot("a", {10.0, 10.2, 9.9, 10.1, 10.05});
  auto b = snapshot("b", {8.0, 8.1, 7.9, 8.05, 8.2}, "fail");
  b.settings["h1 eth1 pfc"] = "none";
  const Comparison c = compare_runs(a, b, 0.05, 2);
  ASSERT_EQ(c.settings.size(), 1u);
  EXPECT_EQ(c.settings[0].after, "none");
  ASSERT_EQ(c.outcomes.size(), 1u);
  EXPECT_EQ(c.outcomes[0].before, "pass");
  EXPECT_EQ(c.outcomes[0].after, "fail");
  ASSERT_EQ(c.metrics.size(), 2u);
  const MetricComparison& m = c.metrics[0];
  EXPECT_EQ(m.metric, "busbw_gbps");
  EXPECT_DOUBLE_EQ(m.median_a, 10.05);
  EXPECT_DOUBLE_EQ(m.median_b, 8.05);
  EXPECT_NEAR(*m.change_pct, -19.900497, 1e-5);
  EXPECT_TRUE(m.decidable);
  EXPECT_TRUE(m.significant);
  EXPECT_NEAR(m.test.p_value, 2.0 / 252, 1e-12);
  EXPECT_FALSE(c.metrics[1].significant);  // errors: 0 in every repeat of both
}

TEST(Comparison, OnePercentJitterIsNotSignificant) {
  const auto a = snapshot("a", {10.0, 10.1, 9.9, 10.05, 9.95});
  const auto b = snapshot("b", {9.9, 10.0, 9.95, 10.02, 9.85});
  const Comparison c = compare_runs(a, b, 0.05, 2);
  EXPECT_TRUE(c.metrics[0].decidable);
  EXPECT_FALSE(c.metrics[0].significant);
  EXPECT_GT(c.metrics[0].test.p_value, 0.05);
  EXPECT_TRUE(c.outcomes.empty());
  EXPECT_TRUE(c.settings.empty());
}

TEST(Comparison, AConsistentShiftSmallerThanTheMinimumChangeIsJitter) {
  // Every B repeat is 1 % lower: the rank test is sure, the engineer does not care.
  const auto a = snapshot("a", {10.0, 10.01, 10.02, 10.03, 10.04, 10.05});
  const auto b = snapshot("b", {9.9, 9.91, 9.92, 9.93, 9.94, 9.95});
  const Comparison c = compare_runs(a, b, 0.05, 2);
  EXPECT_LT(c.metrics[0].test.p_value, 0.01);
  EXPECT_FALSE(c.metrics[0].significant);
  EXPECT_TRUE(compare_runs(a, b, 0.05, 0.5).metrics[0].significant);
}

TEST(Comparison, ThreeRepeatsAreReportedButNeverCalledSignificant) {
  const auto a = snapshot("a", {10, 10.1, 10.2});
  const auto b = snapshot("b", {5, 5.1, 5.2});
  const Comparison c = compare_runs(a, b, 0.05, 2);
  EXPECT_FALSE(c.metrics[0].decidable);
  EXPECT_FALSE(c.metrics[0].significant);
  EXPECT_NEAR(*c.metrics[0].change_pct, -49.5, 0.1);
}

TEST(Comparison, CasesInOnlyOneRunAreOutcomeChangesNotMetrics) {
  auto a = snapshot("a", {1, 2, 3});
  a.cases.push_back({"incast", "incast", "incast", "pass"});
  a.samples["incast"]["cnps"] = {5};
  auto b = snapshot("b", {1, 2, 3});
  b.cases.push_back({"alltoall", "alltoall", "alltoall", "warn"});
  b.samples["alltoall"]["busbw_gbps"] = {1};
  const Comparison c = compare_runs(a, b, 0.05, 2);
  ASSERT_EQ(c.outcomes.size(), 2u);
  EXPECT_EQ(c.outcomes[0].case_id, "alltoall");
  EXPECT_EQ(c.outcomes[0].before, "-");
  EXPECT_EQ(c.outcomes[1].case_id, "incast");
  EXPECT_EQ(c.outcomes[1].after, "-");
  for (const auto& m : c.metrics) EXPECT_EQ(m.case_id, "allreduce/qps=8");
}

TEST(Comparison, MedianAndJson) {
  EXPECT_DOUBLE_EQ(median({3, 1, 2}), 2);
  EXPECT_DOUBLE_EQ(median({4, 1, 2, 3}), 2.5);
  const auto a = snapshot("a", {0, 0, 0});
  const auto b = snapshot("b", {1, 1, 1});
  const auto j = to_json(compare_runs(a, b, 0.05, 2));
  EXPECT_EQ(j["schema_version"], 1);
  EXPECT_TRUE(j["metrics"][0]["change_pct"].is_null());  // from 0: no percentage
  EXPECT_EQ(j["metrics"][0]["b"], nlohmann::json::array({1, 1, 1}));
}

}  // namespace
}  // namespace rocehil::reports
