#pragma once

// A small run to write out: one case of each outcome the report must show.
#include <cmath>

#include "rocehil/reports/run_record.hpp"
#include "rocehil/suites/grade.hpp"

namespace rocehil::reports::testing {

inline suites::Threshold threshold(std::string_view text) {
  return suites::parse_threshold(text).threshold.value();
}

inline CaseRecord graded_case(std::string id, const std::vector<std::string_view>& thresholds,
                              suites::Values metrics, bool expect_fail = false) {
  CaseRecord c;
  c.id = id;
  c.test = id.substr(0, id.find('/'));
  c.workload = "allreduce";
  c.expect_fail = expect_fail;
  c.names = {{"n", 4}, {"link_gbps", 1}};
  std::vector<suites::Threshold> ts;
  for (const auto t : thresholds) ts.push_back(threshold(t));
  Attempt a;
  a.seconds = 1.5;
  a.metrics = std::move(metrics);
  a.grade = suites::grade(ts, a.metrics, c.names);
  c.attempts.push_back(std::move(a));
  c.outcome = outcome_of(c);
  return c;
}

// A case run once per entry of `repeats`, each repeat graded on its own; a repeat listed with
// more than one set of values was retried, its last set standing.
inline CaseRecord repeated_case(std::string id, const std::vector<std::string_view>& thresholds,
                                const std::vector<std::vector<suites::Values>>& repeats,
                                std::string workload = "allreduce") {
  CaseRecord c;
  c.id = id;
  c.test = id.substr(0, id.find('/'));
  c.workload = std::move(workload);
  c.names = {{"n", 4}, {"link_gbps", 1}};
  std::vector<suites::Threshold> ts;
  for (const auto t : thresholds) ts.push_back(threshold(t));
  for (std::size_t r = 0; r < repeats.size(); ++r)
    for (const suites::Values& values : repeats[r]) {
      Attempt a;
      a.repeat = static_cast<int>(r);
      a.seconds = 2;
      a.metrics = values;
      a.grade = suites::grade(ts, a.metrics, c.names);
      c.attempts.push_back(std::move(a));
    }
  c.outcome = outcome_of(c);
  return c;
}

// The case: five repeats of a bw test from 0.229 to 0.395 Gbit/s, the lowest in the
// second repeat and the highest in the last; the median is 0.31. Only the second fails.
inline CaseRecord five_repeats(std::string_view threshold_text = "busbw_gbps >= 0.25") {
  return repeated_case("p2p_bw", {threshold_text},
                       {{{{"busbw_gbps", 0.31}}},
                        {{{"busbw_gbps", 0.229}}},
                        {{{"busbw_gbps", 0.35}}},
                        {{{"busbw_gbps", 0.27}}},
                        {{{"busbw_gbps", 0.395}}}},
                       "bw");
}

inline RunRecord sample_run() {
  RunRecord run;
  run.run_id = "20261122T184501Z-smoke";
  run.started_at = "2026-11-22T18:45:01Z";
  run.suite_name = "smoke";
  run.cases.push_back(
      graded_case("allreduce/qps=1", {"busbw_gbps > 0.05 * link_gbps"}, {{"busbw_gbps", 0.4}}));
  run.cases.push_back(graded_case("allreduce/qps=8", {"busbw_gbps > 0.5 * link_gbps"},
                                  {{"busbw_gbps", 0.25}, {"time_cv", std::nan("")}}));
  run.cases.push_back(
      graded_case("pfc_storm", {"pfc_storms == 0"}, {{"pfc_storms", 1}}, /*expect_fail=*/true));
  CaseRecord lost;
  lost.id = "alltoall";
  lost.test = "alltoall";
  Attempt a;
  a.error = AttemptError{"h3", "setup", "agent on h3 exited <code 137> & said nothing"};
  lost.attempts.push_back(a);
  lost.outcome = outcome_of(lost);
  run.cases.push_back(lost);
  CaseRecord later;
  later.id = "incast";
  later.test = "incast";
  run.cases.push_back(later);
  run.interrupted = true;
  return run;
}

}  // namespace rocehil::reports::testing
