#include "rocehil/suites/grade.hpp"

#include <algorithm>
#include <cmath>

namespace rocehil::suites {

int severity(Verdict v) {
  switch (v) {
    case Verdict::pass: return 0;
    case Verdict::warn: return 1;
    case Verdict::error: return 2;
    case Verdict::fail: return 3;
  }
  return 0;
}

double margin(Comparison op, double measured, double limit) {
  switch (op) {
    case Comparison::gt:
    case Comparison::ge: return measured - limit;
    case Comparison::lt:
    case Comparison::le: return limit - measured;
    case Comparison::eq: return -std::abs(measured - limit);
    case Comparison::ne: return std::abs(measured - limit);
  }
  return 0;
}

bool worse(const ThresholdResult& a, const ThresholdResult& b) {
  const int sa = severity(a.evaluation.verdict), sb = severity(b.evaluation.verdict);
  if (sa != sb) return sa > sb;
  const Evaluation &ea = a.evaluation, &eb = b.evaluation;
  // A value that could not be told (not measured, no limit) ranks after one that could.
  if (!ea.measured || !ea.limit) return false;
  if (!eb.measured || !eb.limit) return true;
  return margin(a.op, *ea.measured, *ea.limit) < margin(b.op, *eb.measured, *eb.limit);
}

CaseGrade grade(const std::vector<Threshold>& thresholds, const Values& measured,
                const Values& names, const Unmeasured& unmeasured, const Attribution& where) {
  CaseGrade g;
  for (const Threshold& t : thresholds) {
    ThresholdResult r{.threshold = t.text,
                      .level = t.level,
                      .op = t.op,
                      .evaluation = evaluate(t, measured, names, unmeasured, where)};
    if (severity(r.evaluation.verdict) > severity(g.verdict)) g.verdict = r.evaluation.verdict;
    g.results.push_back(std::move(r));
  }
  return g;
}

bool should_retry(const std::vector<Threshold>& thresholds, const CaseGrade& grade, int runs) {
  if (grade.verdict != Verdict::fail) return false;
  for (std::size_t i = 0; i < thresholds.size() && i < grade.results.size(); ++i)
    if (grade.results[i].evaluation.verdict == Verdict::fail && thresholds[i].retry > runs - 1)
      return true;
  return false;
}

std::string_view to_string(Outcome o) {
  switch (o) {
    case Outcome::pass: return "pass";
    case Outcome::warn: return "warn";
    case Outcome::fail: return "fail";
    case Outcome::error: return "error";
    case Outcome::expected_fail: return "expected_fail";
    case Outcome::unexpected_pass: return "unexpected_pass";
    case Outcome::not_run: return "not_run";
    case Outcome::skipped: return "skipped";
  }
  return "error";
}

Outcome outcome_of(Verdict verdict, bool expect_fail) {
  switch (verdict) {
    case Verdict::error: return Outcome::error;
    case Verdict::fail: return expect_fail ? Outcome::expected_fail : Outcome::fail;
    case Verdict::warn: return expect_fail ? Outcome::unexpected_pass : Outcome::warn;
    case Verdict::pass: return expect_fail ? Outcome::unexpected_pass : Outcome::pass;
  }
  return Outcome::error;
}

bool is_failure(Outcome o) {
  return o == Outcome::fail || o == Outcome::unexpected_pass;
}

int run_exit_code(const std::vector<Outcome>& outcomes, bool interrupted) {
  if (interrupted) return 3;
  if (std::any_of(outcomes.begin(), outcomes.end(), is_failure)) return 1;
  const auto unfinished = [](Outcome o) { return o == Outcome::error || o == Outcome::not_run; };
  if (std::any_of(outcomes.begin(), outcomes.end(), unfinished)) return 3;
  return 0;
}

}  // namespace rocehil::suites
