#include "rocehil/reports/run_record.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <optional>

#include "rocehil/reports/repeats.hpp"

namespace rocehil::reports {

std::string_view to_string(Fault fault) {
  switch (fault) {
    case Fault::infrastructure: return "infrastructure";
    case Fault::fabric: return "fabric";
  }
  return "infrastructure";
}

suites::Outcome outcome_of(const CaseRecord& c) {
  if (!c.skip_reason.empty()) return suites::Outcome::skipped;
  if (c.attempts.empty()) return suites::Outcome::not_run;
  std::optional<suites::Verdict> worst;
  for (const Attempt* a : final_attempts(c)) {
    if (!a->error && !a->grade) return suites::Outcome::not_run;  // measured, not yet graded
    const suites::Verdict v = !a->error                          ? a->grade->verdict
                              : a->error->fault == Fault::fabric ? suites::Verdict::fail
                                                                 : suites::Verdict::error;
    if (!worst || suites::severity(v) > suites::severity(*worst)) worst = v;
  }
  return suites::outcome_of(*worst, c.expect_fail);
}

std::vector<std::string> starved_reasons(const CaseRecord& c) {
  std::vector<std::string> out;
  const auto attempts = final_attempts(c);
  const bool repeats =
      std::any_of(attempts.begin(), attempts.end(), [](const Attempt* a) { return a->repeat > 0; });
  for (const Attempt* a : attempts)
    for (const std::string& why : a->cpu_starved) {
      std::string line = repeats ? fmt::format("repeat {}: {}", a->repeat + 1, why) : why;
      if (std::find(out.begin(), out.end(), line) == out.end()) out.push_back(std::move(line));
    }
  return out;
}

OutcomeCounts count_outcomes(const RunRecord& run) {
  OutcomeCounts n;
  for (const auto& c : run.cases) switch (c.outcome) {
      case suites::Outcome::pass: ++n.pass; break;
      case suites::Outcome::warn: ++n.warn; break;
      case suites::Outcome::fail: ++n.fail; break;
      case suites::Outcome::error: ++n.error; break;
      case suites::Outcome::expected_fail: ++n.expected_fail; break;
      case suites::Outcome::unexpected_pass: ++n.unexpected_pass; break;
      case suites::Outcome::not_run: ++n.not_run; break;
      case suites::Outcome::skipped: ++n.skipped; break;
    }
  return n;
}

std::string summary_line(const OutcomeCounts& n) {
  std::string line;
  const auto part = [&](int count, std::string_view one, std::string_view many) {
    if (count == 0) return;
    if (!line.empty()) line += ", ";
    line += fmt::format("{} {}", count, count == 1 ? one : many);
  };
  part(n.pass, "passed", "passed");
  part(n.warn, "passed with a warning", "passed with warnings");
  part(n.fail, "failed", "failed");
  part(n.unexpected_pass, "passed but was expected to fail", "passed but were expected to fail");
  part(n.expected_fail, "failed as expected", "failed as expected");
  part(n.error, "could not be measured", "could not be measured");
  part(n.not_run, "not run", "not run");
  part(n.skipped, "skipped", "skipped");
  return line.empty() ? "no test cases" : line;
}

}  // namespace rocehil::reports
