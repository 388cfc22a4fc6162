#include "rocehil/reports/comparison.hpp"

#include <algorithm>
#include <cmath>
#include <map>

namespace rocehil::reports {

namespace {

std::map<std::string, std::string> outcomes_by_case(const History::RunSnapshot& run) {
  std::map<std::string, std::string> out;
  for (const auto& c : run.cases) out[c.id] = c.outcome;
  return out;
}

std::vector<OutcomeChange> outcome_changes(const History::RunSnapshot& a,
                                           const History::RunSnapshot& b) {
  const auto before = outcomes_by_case(a), after = outcomes_by_case(b);
  std::vector<OutcomeChange> out;
  for (const auto& c : b.cases) {
    const auto was = before.find(c.id);
    const std::string old = was == before.end() ? "-" : was->second;
    if (old != c.outcome) out.push_back({c.id, old, c.outcome});
  }
  for (const auto& c : a.cases)
    if (!after.contains(c.id)) out.push_back({c.id, c.outcome, "-"});
  return out;
}

MetricComparison compare_metric(const std::string& case_id, const std::string& metric,
                                const std::vector<double>& a, const std::vector<double>& b,
                                double alpha, double min_change_pct) {
  MetricComparison m;
  m.case_id = case_id;
  m.metric = metric;
  m.a = a;
  m.b = b;
  m.median_a = median(a);
  m.median_b = median(b);
  if (m.median_a != 0) m.change_pct = (m.median_b - m.median_a) / std::fabs(m.median_a) * 100;
  m.test = mann_whitney_u(a, b);
  m.decidable = smallest_p_value(static_cast<int>(a.size()), static_cast<int>(b.size())) < alpha;
  // From a median of 0 any change is infinitely large in %: the p-value decides alone.
  const bool large_enough = !m.change_pct || std::fabs(*m.change_pct) >= min_change_pct;
  m.significant = m.decidable && m.test.p_value < alpha && large_enough;
  return m;
}

nlohmann::json number_or_null(const std::optional<double>& v) {
  return v && std::isfinite(*v) ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

}  // namespace

double median(std::vector<double> values) {
  if (values.empty()) return std::nan("");
  std::sort(values.begin(), values.end());
  const std::size_t mid = values.size() / 2;
  return values.size() % 2 ? values[mid] : (values[mid - 1] + values[mid]) / 2;
}

Comparison compare_runs(const History::RunSnapshot& a, const History::RunSnapshot& b, double alpha,
                        double min_change_pct) {
  Comparison c;
  c.run_a = a.row.run_id;
  c.run_b = b.row.run_id;
  c.kind_a = a.row.kind;
  c.kind_b = b.row.kind;
  c.alpha = alpha;
  c.min_change_pct = min_change_pct;
  c.settings = settings_diff(a.settings, b.settings);
  c.outcomes = outcome_changes(a, b);
  for (const auto& k : b.cases) {
    const auto in_a = a.samples.find(k.id), in_b = b.samples.find(k.id);
    if (in_a == a.samples.end() || in_b == b.samples.end()) continue;
    for (const auto& [metric, values_b] : in_b->second) {
      const auto values_a = in_a->second.find(metric);
      if (values_a == in_a->second.end() || values_a->second.empty() || values_b.empty()) continue;
      c.metrics.push_back(
          compare_metric(k.id, metric, values_a->second, values_b, alpha, min_change_pct));
    }
  }
  return c;
}

nlohmann::json to_json(const Comparison& c) {
  nlohmann::json settings = nlohmann::json::array();
  for (const auto& s : c.settings)
    settings.push_back({{"name", s.name},
                        {"a", s.before ? nlohmann::json(*s.before) : nlohmann::json(nullptr)},
                        {"b", s.after ? nlohmann::json(*s.after) : nlohmann::json(nullptr)}});
  nlohmann::json outcomes = nlohmann::json::array();
  for (const auto& o : c.outcomes)
    outcomes.push_back({{"case", o.case_id}, {"a", o.before}, {"b", o.after}});
  nlohmann::json metrics = nlohmann::json::array();
  for (const auto& m : c.metrics)
    metrics.push_back({{"case", m.case_id},
                       {"metric", m.metric},
                       {"a", m.a},
                       {"b", m.b},
                       {"median_a", m.median_a},
                       {"median_b", m.median_b},
                       {"change_pct", number_or_null(m.change_pct)},
                       {"u", m.test.u},
                       {"p_value", m.test.p_value},
                       {"exact", m.test.exact},
                       {"decidable", m.decidable},
                       {"significant", m.significant}});
  return {{"schema_version", 1},
          {"run_a", c.run_a},
          {"run_b", c.run_b},
          {"kind_a", std::string(to_string(c.kind_a.kind))},
          {"kind_b", std::string(to_string(c.kind_b.kind))},
          {"alpha", c.alpha},
          {"min_change_pct", c.min_change_pct},
          {"settings", settings},
          {"outcomes", outcomes},
          {"metrics", metrics}};
}

}  // namespace rocehil::reports
