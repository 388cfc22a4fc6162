#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "rocehil/reports/history.hpp"
#include "rocehil/reports/mann_whitney.hpp"
#include "rocehil/reports/settings.hpp"

namespace rocehil::reports {

// Run B against run A (A is the reference: last night, the known good firmware): settings that
// differ first, then outcomes that changed, then every metric both runs measured in a case both
// ran, with both runs' repeat samples and a rank test of whether the change is more than noise.

struct MetricComparison {
  std::string case_id, metric;
  std::vector<double> a, b;  // the repeats' values
  double median_a = 0, median_b = 0;
  std::optional<double> change_pct;  // (B - A) / |A| of the medians; empty when A's is 0
  MannWhitney test;
  // p < alpha and the medians moved by at least min_change_pct: a rank test calls a shift of
  // 0.3 % significant when every repeat shows it, and no one bisects a fabric for that. With too
  // few repeats the test cannot get there (3 against 3: p >= 0.1); then `decidable` is false and
  // the change is reported, never called significant.
  bool significant = false;
  bool decidable = false;
};

struct OutcomeChange {
  std::string case_id;
  std::string before, after;  // "-": the run has no such case
};

struct Comparison {
  std::string run_a, run_b;
  RunKindInfo kind_a, kind_b;  // a bisect step or an --only run lacks cases for a reason
  double alpha = 0.05;
  double min_change_pct = 2;
  std::vector<SettingChange> settings;
  std::vector<OutcomeChange> outcomes;
  std::vector<MetricComparison> metrics;  // in run B's case order, then metric name
};

Comparison compare_runs(const History::RunSnapshot& a, const History::RunSnapshot& b, double alpha,
                        double min_change_pct);

double median(std::vector<double> values);

nlohmann::json to_json(const Comparison& c);

}  // namespace rocehil::reports
