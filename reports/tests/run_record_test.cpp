#include "rocehil/reports/run_record.hpp"

#include <gtest/gtest.h>

#include "record_fixture.hpp"

namespace rocehil::reports {
namespace {

TEST(RunRecord, OutcomesComeFromTheLastAttempt) {
  const RunRecord run = testing::sample_run();
  EXPECT_EQ(run.cases[0].outcome, suites::Outcome::pass);
  EXPECT_EQ(run.cases[1].outcome, suites::Outcome::fail);
  EXPECT_EQ(run.cases[2].outcome, suites::Outcome::expected_fail);
  EXPECT_EQ(run.cases[3].outcome, suites::Outcome::error);
  EXPECT_EQ(run.cases[4].outcome, suites::Outcome::not_run);

  // A retry that passed clears the failure before it.
  CaseRecord c = run.cases[1];
  Attempt again = c.attempts.back();
  again.grade->verdict = suites::Verdict::pass;
  c.attempts.push_back(again);
  EXPECT_EQ(outcome_of(c), suites::Outcome::pass);
}

TEST(RunRecord, TheSummaryLineCountsEachOutcome) {
  const RunRecord run = testing::sample_run();
  EXPECT_EQ(summary_line(count_outcomes(run)),
            "1 passed, 1 failed, 1 failed as expected, 1 could not be measured, 1 not run");
  EXPECT_EQ(summary_line(OutcomeCounts{}), "no test cases");
  EXPECT_EQ(summary_line(OutcomeCounts{.pass = 3, .warn = 2}), "3 passed, 2 passed with warnings");
}

TEST(RunRecord, TheWorstRepeatDecidesAndARetryReplacesWhatItRetried) {
  CaseRecord c = testing::sample_run().cases[0];  // one passing attempt, repeat 0
  Attempt failed = c.attempts[0];
  failed.repeat = 1;
  failed.grade->verdict = suites::Verdict::fail;
  c.attempts.push_back(failed);
  EXPECT_EQ(outcome_of(c), suites::Outcome::fail);
  Attempt retried = failed;
  retried.grade->verdict = suites::Verdict::warn;
  c.attempts.push_back(retried);  // repeat 1 retried, and it passed with a warning
  EXPECT_EQ(outcome_of(c), suites::Outcome::warn);
  Attempt lost;
  lost.repeat = 2;
  lost.error = AttemptError{"h1", "launch", "ssh: connection refused"};
  c.attempts.push_back(lost);
  EXPECT_EQ(outcome_of(c), suites::Outcome::error);
}

// A transport error the fabric caused fails the case in every workload, as a failed threshold
// does: it is no infrastructure error (exit 3), which a bisection would take for "stop".
TEST(RunRecord, AFabricFaultFailsTheCase) {
  CaseRecord c;
  c.id = "allreduce/qps=1";
  c.workload = "allreduce";
  Attempt a;
  a.error = AttemptError{"h4", "traffic",
                         "the fabric: QP 0x11: retry_exceeded (rank 3 (h3) -> rank 4 (h4))",
                         Fault::fabric};
  c.attempts.push_back(a);
  EXPECT_EQ(outcome_of(c), suites::Outcome::fail);
  c.expect_fail = true;  // a test that cuts a link to see it caught
  EXPECT_EQ(outcome_of(c), suites::Outcome::expected_fail);
  c.expect_fail = false;
  // An agent that died in another repeat does not hide it: fail beats error.
  Attempt lost;
  lost.repeat = 1;
  lost.error = AttemptError{"h1", "launch", "ssh: connection refused"};
  c.attempts.push_back(lost);
  EXPECT_EQ(outcome_of(c), suites::Outcome::fail);
  EXPECT_EQ(suites::run_exit_code({outcome_of(c)}, false), 1);
  // The harness's own errors stay errors.
  c.attempts.erase(c.attempts.begin());
  EXPECT_EQ(outcome_of(c), suites::Outcome::error);
  EXPECT_EQ(suites::run_exit_code({outcome_of(c)}, false), 3);
}

}  // namespace
}  // namespace rocehil::reports
