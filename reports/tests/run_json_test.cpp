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

// Each case says what its repeats come to, as every writer shows it: the median of the
// headline with its spread, each threshold by its worst repeat.
TEST(RunJson, ACaseSummaryGivesTheMedianAndTheWorstRepeat) {
  const nlohmann::json j = to_json(testing::five_repeats("busbw_gbps >= 0.25"));
  const auto& s = j["summary"];
  EXPECT_EQ(s["repeats"], 5);
  EXPECT_EQ(s["retries"], 0);
  EXPECT_EQ(s["headline"]["metric"], "busbw_gbps");
  EXPECT_EQ(s["headline"]["median"], 0.31);
  EXPECT_EQ(s["headline"]["low"], 0.229);
  EXPECT_EQ(s["headline"]["high"], 0.395);
  EXPECT_EQ(s["headline"]["text"], "bw 0.31 Gbit/s, median of 5 repeats (0.229 to 0.395)");
  const auto& t = s["thresholds"][0];
  EXPECT_EQ(t["verdict"], "fail");
  EXPECT_EQ(t["repeat"], 1);
  EXPECT_EQ(t["measured"], 0.229);
  EXPECT_EQ(t["at_verdict"], 1);
  EXPECT_TRUE(s["error"].is_null());
}

// What a case is summarised from comes back from run.json as it went in.
TEST(RunJson, ACaseReadsBackWhatItsRepeatsAreSummarisedFrom) {
  const CaseRecord c = testing::five_repeats("busbw_gbps >= 0.25");
  const CaseRecord back = case_record(to_json(c));
  EXPECT_EQ(back.id, c.id);
  EXPECT_EQ(back.workload, "bw");
  ASSERT_EQ(back.attempts.size(), 5u);
  EXPECT_EQ(back.attempts[1].repeat, 1);
  EXPECT_EQ(back.attempts[1].metrics.at("busbw_gbps"), 0.229);
  ASSERT_TRUE(back.attempts[1].grade);
  const auto& r = back.attempts[1].grade->results.at(0);
  EXPECT_EQ(r.op, suites::Comparison::ge);
  EXPECT_EQ(r.evaluation.verdict, suites::Verdict::fail);
  EXPECT_EQ(to_json(back)["summary"], to_json(c)["summary"]);
  // Nothing in a hand-edited file makes it throw.
  EXPECT_NO_THROW(case_record(nlohmann::json::parse(
      R"({"attempts": [{"repeat": "x", "grade": {"thresholds": [7, {"verdict": 3}]}}, 5]})")));
}

// An error says whose fault it is, and reads back so; one written before the field existed was
// the harness's.
TEST(RunJson, AnErrorSaysWhoseFaultItIs) {
  CaseRecord c;
  c.id = "incast";
  Attempt a;
  a.error = AttemptError{"h4", "traffic", "the fabric: QP 0x11: retry_exceeded", Fault::fabric};
  c.attempts.push_back(a);
  c.outcome = outcome_of(c);
  const nlohmann::json j = to_json(c);
  EXPECT_EQ(j["attempts"][0]["error"]["fault"], "fabric");
  EXPECT_EQ(j["summary"]["error"]["fault"], "fabric");
  EXPECT_EQ(j["outcome"], "fail");
  const CaseRecord back = case_record(j);
  ASSERT_TRUE(back.attempts.at(0).error);
  EXPECT_EQ(back.attempts[0].error->fault, Fault::fabric);
  EXPECT_EQ(outcome_of(back), suites::Outcome::fail);
  nlohmann::json old = j;
  old["attempts"][0]["error"].erase("fault");
  EXPECT_EQ(case_record(old).attempts.at(0).error->fault, Fault::infrastructure);
}

}  // namespace
}  // namespace rocehil::reports
