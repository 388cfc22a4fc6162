// A suite's series over its runs and the change points in them (see trend.hpp).
#include "rocehil/reports/trend.hpp"

#include <fmt/format.h>
#include <fnmatch.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "rocehil/common/error.hpp"
#include "rocehil/reports/comparison.hpp"

namespace rocehil::reports {

namespace {

// A case's headline: what `rocehil run` prints for it, the first of these it measured.
constexpr const char* headline_candidates[] = {"busbw_gbps", "lat_p99_us"};

std::vector<std::string> headline_metrics(
    const std::map<std::string, std::vector<double>>& measured) {
  for (const char* m : headline_candidates)
    if (measured.contains(m)) return {m};
  return {};
}

// The runs' recorded settings, each read when first asked for.
class SettingsOfRuns {
 public:
  SettingsOfRuns(const History& history, const std::vector<TrendRun>& runs)
      : history_(history), runs_(runs), read_(runs.size()) {}
  const Settings& of(std::size_t run) {
    if (!read_[run]) read_[run] = history_.recorded_settings(runs_[run].run_id);
    return *read_[run];
  }

 private:
  const History& history_;
  const std::vector<TrendRun>& runs_;
  std::vector<std::optional<Settings>> read_;
};

// Median of the values at present indices [from, to) of `values`.
double segment_median(const std::vector<std::optional<double>>& values, std::size_t from,
                      std::size_t to) {
  std::vector<double> present;
  for (std::size_t i = from; i < to; ++i)
    if (values[i]) present.push_back(*values[i]);
  return median(present);
}

void find_changes(TrendSeries& s, SettingsOfRuns& settings, const ChangePointOptions& detection) {
  std::vector<double> present;
  std::vector<std::size_t> run_of;  // present value -> run index
  for (std::size_t r = 0; r < s.values.size(); ++r)
    if (s.values[r]) {
      present.push_back(*s.values[r]);
      run_of.push_back(r);
    }
  const auto points = find_change_points(present, detection);
  for (std::size_t i = 0; i < points.size(); ++i) {
    const std::size_t at = points[i].index;
    const std::size_t segment_begin = i == 0 ? 0 : run_of[points[i - 1].index];
    const std::size_t segment_end =
        i + 1 < points.size() ? run_of[points[i + 1].index] : s.values.size();
    TrendChange c;
    c.run = run_of[at];
    c.before = run_of[at - 1];
    c.median_before = segment_median(s.values, segment_begin, c.run);
    c.median_after = segment_median(s.values, c.run, segment_end);
    if (c.median_before != 0)
      c.change_pct = (c.median_after - c.median_before) / std::abs(c.median_before) * 100;
    c.p = points[i].p;
    c.worse = (s.better == suites::Better::higher && c.median_after < c.median_before) ||
              (s.better == suites::Better::lower && c.median_after > c.median_before);
    c.changed = settings_diff(settings.of(c.before), settings.of(c.run));
    s.changes.push_back(std::move(c));
  }
}

const char* better_name(suites::Better b) {
  switch (b) {
    case suites::Better::higher: return "higher";
    case suites::Better::lower: return "lower";
    case suites::Better::neither: return "neither";
  }
  return "neither";
}

}  // namespace

Trend trend(const History& history, const TrendOptions& options) {
  if (options.last < 2)
    throw input_error(
        fmt::format("trend: --last {} leaves no series (2 runs at least)", options.last));
  auto rows = history.runs(options.suite, options.last, /*headlines=*/false);
  if (rows.empty())
    throw input_error(
        fmt::format("trend: the history has no run of suite '{}' (rocehil history "
                    "lists the runs it has)",
                    options.suite));
  std::reverse(rows.begin(), rows.end());
  Trend t;
  t.suite = options.suite;
  // Only the metrics followed are read: a run holds every metric of every case.
  const std::vector<std::string> wanted =
      options.metrics.empty()
          ? std::vector<std::string>(std::begin(headline_candidates), std::end(headline_candidates))
          : options.metrics;
  std::vector<History::RunValues> runs;
  for (const auto& row : rows) {
    t.runs.push_back({row.run_id, row.started_at, row.exit_code});
    runs.push_back(history.values(row.run_id, wanted));
  }
  // Case order: the newest run's, then cases only older runs had, in the order first seen.
  std::vector<std::string> cases;
  for (auto r = runs.rbegin(); r != runs.rend(); ++r)
    for (const auto& c : r->cases)
      if (std::find(cases.begin(), cases.end(), c) == cases.end() &&
          fnmatch(options.case_glob.c_str(), c.c_str(), 0) == 0)
        cases.push_back(c);
  // Settings are read for the runs on either side of a change point only.
  SettingsOfRuns settings(history, t.runs);
  for (const auto& case_id : cases) {
    std::vector<std::string> metrics = options.metrics;
    if (metrics.empty())
      for (auto r = runs.rbegin(); r != runs.rend() && metrics.empty(); ++r)
        if (const auto it = r->samples.find(case_id); it != r->samples.end())
          metrics = headline_metrics(it->second);
    for (const auto& metric : metrics) {
      TrendSeries series{case_id, metric, suites::better_when(metric), {}, {}};
      bool any = false;
      for (const auto& r : runs) {
        std::optional<double> v;
        if (const auto c = r.samples.find(case_id); c != r.samples.end())
          if (const auto m = c->second.find(metric); m != c->second.end() && !m->second.empty()) {
            std::vector<double> finite;
            for (const double x : m->second)
              if (std::isfinite(x)) finite.push_back(x);
            if (!finite.empty()) v = median(finite);
          }
        any = any || v.has_value();
        series.values.push_back(v);
      }
      if (!any) continue;
      find_changes(series, settings, options.detection);
      t.series.push_back(std::move(series));
    }
  }
  return t;
}

SeriesSpan span_of(const TrendSeries& s) {
  SeriesSpan span;
  for (const auto& v : s.values)
    if (v) {
      ++span.measured;
      if (!span.first) span.first = v;
      span.last = v;
    }
  for (const auto& c : s.changes) span.worse += c.worse;
  return span;
}

std::vector<WorseChange> worse_changes_in_last(const Trend& t, std::size_t runs) {
  std::vector<WorseChange> out;
  const std::size_t first = t.runs.size() > runs ? t.runs.size() - runs : 0;
  for (const auto& s : t.series)
    for (const auto& c : s.changes)
      if (c.worse && c.run >= first) out.push_back({&s, &c});
  return out;
}

nlohmann::ordered_json to_json(const Trend& t) {
  nlohmann::ordered_json j;
  j["schema_version"] = 1;
  j["suite"] = t.suite;
  auto& runs = j["runs"] = nlohmann::ordered_json::array();
  for (const auto& r : t.runs)
    runs.push_back({{"run_id", r.run_id},
                    {"started_at", r.started_at},
                    {"exit_code", r.exit_code ? nlohmann::ordered_json(*r.exit_code) : nullptr}});
  auto& all = j["series"] = nlohmann::ordered_json::array();
  for (const auto& s : t.series) {
    nlohmann::ordered_json values = nlohmann::ordered_json::array();
    for (const auto& v : s.values) values.push_back(v ? nlohmann::ordered_json(*v) : nullptr);
    nlohmann::ordered_json changes = nlohmann::ordered_json::array();
    for (const auto& c : s.changes) {
      nlohmann::ordered_json changed = nlohmann::ordered_json::array();
      for (const auto& x : c.changed)
        changed.push_back({{"name", x.name},
                           {"before", x.before ? nlohmann::ordered_json(*x.before) : nullptr},
                           {"after", x.after ? nlohmann::ordered_json(*x.after) : nullptr}});
      changes.push_back(
          {{"run_id", t.runs[c.run].run_id},
           {"run", c.run},
           {"before_run_id", t.runs[c.before].run_id},
           {"median_before", c.median_before},
           {"median_after", c.median_after},
           {"change_pct", c.change_pct ? nlohmann::ordered_json(*c.change_pct) : nullptr},
           {"p", c.p},
           {"worse", c.worse},
           {"changed", std::move(changed)}});
    }
    all.push_back({{"case", s.case_id},
                   {"metric", s.metric},
                   {"better", better_name(s.better)},
                   {"values", std::move(values)},
                   {"changes", std::move(changes)}});
  }
  return j;
}

}  // namespace rocehil::reports
