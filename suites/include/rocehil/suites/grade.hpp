#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "rocehil/suites/threshold.hpp"

namespace rocehil::suites {

// Grading one test case: every threshold against what the case measured. Pure.

struct ThresholdResult {
  std::string threshold;  // its text
  Level level = Level::fail;
  Comparison op = Comparison::ge;  // which side of the limit passes
  Evaluation evaluation;
};

struct CaseGrade {
  // fail beats error beats warn beats pass: a failed threshold is the answer even when another
  // could not be evaluated.
  Verdict verdict = Verdict::pass;
  std::vector<ThresholdResult> results;
  // Why its timing numbers may be the scheduler's rather than the fabric's (starvation.hpp);
  // empty when nothing says so.
  std::vector<std::string> starved;
};

// The order verdicts outrank each other in: pass 0, warn 1, error 2, fail 3.
int severity(Verdict v);

// How far a measured value lies on the passing side of its limit; negative on the failing side
// (busbw_gbps = 0.229 against >= 0.3: -0.071).
double margin(Comparison op, double measured, double limit);

// Each repeat of a case is graded on its own, and the case is as bad as its worst repeat. Of two
// repeats' results for one threshold, whether `a` is the worse: its verdict is more severe or, at
// one verdict, its value lies further on the failing side of the limit (for >=, the lower). What
// is said about a threshold quotes its worst repeat, the one that decided it.
bool worse(const ThresholdResult& a, const ThresholdResult& b);

CaseGrade grade(const std::vector<Threshold>& thresholds, const Values& measured,
                const Values& names, const Unmeasured& unmeasured = {},
                const Attribution& where = {});

// After `runs` runs of a case (1 after the first), whether to run it again: it failed, and a
// threshold that failed allows more retries than have been spent (runs - 1). A fluctuation must
// not condemn a node; a repeated failure does.
bool should_retry(const std::vector<Threshold>& thresholds, const CaseGrade& grade, int runs);

// What a test case's run comes to once its expectation is taken into account. A test marked
// `expect: fail` exists to show the harness catching a fault: its failure is the good outcome
// and a pass means the fault went unseen.
enum class Outcome : std::uint8_t {
  pass,
  warn,
  fail,
  error,            // it could not be run or measured: a host, an agent or a capture failed
  expected_fail,    // expect: fail, and a threshold failed
  unexpected_pass,  // expect: fail, yet every threshold passed
  not_run,          // the run was interrupted first
  skipped,          // not run on purpose: the hosts cannot take it (the case says why)
};
std::string_view to_string(Outcome o);
Outcome outcome_of(Verdict verdict, bool expect_fail);
// Whether an outcome condemns the fabric (fail, unexpected_pass).
bool is_failure(Outcome o);

// The run's exit status (docs/suites.md): 3 when interrupted, else 1 when any case failed, else
// 3 when any could not be run or measured, else 0. A skipped case counts for nothing.
int run_exit_code(const std::vector<Outcome>& outcomes, bool interrupted);

}  // namespace rocehil::suites
