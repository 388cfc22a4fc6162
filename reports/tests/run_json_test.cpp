#include "rocehil/reports/run_json.hpp"

#include <gtest/gtest.h>

#include "record_fixture.hpp"

namespace rocehil::reports {
namespace {

TEST(RunJson, CarriesEveryCaseWithItsVerdictsAndMeasuredValues) {
  RunRecord run = testing::sample_run();
  run.exit_code = 3;
  const nlohmann::json j = to_json(run);
  EXPECT_EQ(j["schema_version"], 1);
  EXPECT_EQ(j["run_id"], "20261122T184501Z-smoke");
  EXPECT_TRUE(j["finished_at"].is_null());
  EXPECT_EQ(j["exit_code"], 3);
  EXPECT_TRUE(j["interrupted"]);
  EXPECT_EQ(j["summary"]["fail"], 1);
  EXPECT_EQ(j["summary"]["expected_fail"], 1);
  ASSERT_EQ(j["cases"].size(), 5u);

  const auto& failed = j["cases"][1];
  EXPECT_EQ(failed["id"], "allreduce/qps=8");
  EXPECT_EQ(failed["outcome"], "fail");
  EXPECT_EQ(failed["names"]["link_gbps"], 1.0);
  const auto& attempt = failed["attempts"][0];
  EXPECT_EQ(attempt["metrics"]["busbw_gbps"], 0.25);
  EXPECT_TRUE(attempt["metrics"]["time_cv"].is_null());  // NaN is never written as a number
  const auto& verdict = attempt["grade"]["thresholds"][0];
  EXPECT_EQ(verdict["threshold"], "busbw_gbps > 0.5 * link_gbps");
  EXPECT_EQ(verdict["verdict"], "fail");
  EXPECT_EQ(verdict["measured"], 0.25);
  EXPECT_EQ(verdict["limit"], 0.5);
  EXPECT_EQ(attempt["grade"]["verdict"], "fail");

  const auto& lost = j["cases"][3];
  EXPECT_EQ(lost["outcome"], "error");
  EXPECT_EQ(lost["attempts"][0]["error"]["host"], "h3");
  EXPECT_EQ(lost["attempts"][0]["error"]["phase"], "setup");
  EXPECT_TRUE(lost["attempts"][0]["grade"].is_null());
  EXPECT_EQ(j["cases"][4]["outcome"], "not_run");
  EXPECT_TRUE(j["cases"][4]["attempts"].empty());

  // It survives a round trip through text.
  EXPECT_EQ(nlohmann::json::parse(j.dump()), j);
}

}  // namespace
}  // namespace rocehil::reports
