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

bool worse_direction(suites::Better better, double before, double after) {
  return (better == suites::Better::higher && after < before) ||
         (better == suites::Better::lower && after > before);
}

// The change points of the present values of `values[0, end)`, as run indices (the first run
// after each) and whether the level went up.
struct Located {
  std::size_t run = 0;
  bool up = false;
};
// The measured values of runs [0, end) without the gaps, and the run of each.
struct Present {
  std::vector<double> values;
  std::vector<std::size_t> run_of;
};
Present present_of(const std::vector<std::optional<double>>& values, std::size_t end) {
  Present p;
  for (std::size_t r = 0; r < end; ++r)
    if (values[r]) {
      p.values.push_back(*values[r]);
      p.run_of.push_back(r);
    }
  return p;
}

std::vector<Located> locate(const std::vector<std::optional<double>>& values, std::size_t end,
                            const ChangePointOptions& detection) {
  const auto [present, run_of] = present_of(values, end);
  std::vector<Located> out;
  const auto points = find_change_points(present, detection);
  for (std::size_t i = 0; i < points.size(); ++i) {
    const std::size_t from = i == 0 ? 0 : points[i - 1].index;
    const std::size_t to = i + 1 < points.size() ? points[i + 1].index : present.size();
    const double before = median({present.begin() + static_cast<std::ptrdiff_t>(from),
                                  present.begin() + static_cast<std::ptrdiff_t>(points[i].index)});
    const double after = median({present.begin() + static_cast<std::ptrdiff_t>(points[i].index),
                                 present.begin() + static_cast<std::ptrdiff_t>(to)});
    out.push_back({run_of[points[i].index], after > before});
  }
  return out;
}

}  // namespace

std::vector<TrendChange> changes_in(const std::vector<std::optional<double>>& values,
                                    suites::Better better, const ChangePointOptions& detection,
                                    std::size_t recent) {
  std::vector<TrendChange> out;
  const auto [present, run_of] = present_of(values, values.size());
  const auto points = find_change_points(present, detection);
  // What the series told before its newest runs came: a change found then (where the newest
  // runs measured nothing, the answer is the same) is not new now.
  const std::size_t old_end = values.size() > recent ? values.size() - recent : 0;
  const bool newest_measured = !run_of.empty() && run_of.back() >= old_end;
  std::vector<Located> told_before;
  if (newest_measured && !points.empty()) told_before = locate(values, old_end, detection);
  for (std::size_t i = 0; i < points.size(); ++i) {
    const std::size_t at = points[i].index;
    const std::size_t segment_begin = i == 0 ? 0 : run_of[points[i - 1].index];
    const std::size_t segment_end =
        i + 1 < points.size() ? run_of[points[i + 1].index] : values.size();
    TrendChange c;
    c.run = run_of[at];
    c.before = run_of[at - 1];
    c.median_before = segment_median(values, segment_begin, c.run);
    c.median_after = segment_median(values, c.run, segment_end);
    if (c.median_before != 0)
      c.change_pct = (c.median_after - c.median_before) / std::abs(c.median_before) * 100;
    c.p = points[i].p;
    c.p_permutation = points[i].p_permutation;
    c.p_t = points[i].p_t;
    c.worse = worse_direction(better, c.median_before, c.median_after);
    // Adding a run can move a noisy change's best split by a run or two: within min_segment - 1
    // runs, the same way, it is the change told before.
    const bool up = c.median_after > c.median_before;
    c.first_found = newest_measured &&
                    std::none_of(told_before.begin(), told_before.end(), [&](const Located& l) {
                      const std::size_t d = l.run > c.run ? l.run - c.run : c.run - l.run;
                      return l.up == up && d < detection.min_segment;
                    });
    out.push_back(std::move(c));
  }
  return out;
}

namespace {

void find_changes(TrendSeries& s, SettingsOfRuns& settings, const ChangePointOptions& detection,
                  std::size_t recent) {
  s.changes = changes_in(s.values, s.better, detection, recent);
  for (auto& c : s.changes) c.changed = settings_diff(settings.of(c.before), settings.of(c.run));
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
  auto rows = history.runs(options.suite, options.last, /*headlines=*/false, options.kinds);
  if (rows.empty())
    throw input_error(
        fmt::format("trend: the history has no run of suite '{}' of the kinds asked (rocehil "
                    "history --kind all lists the runs it has; --kind all takes every kind)",
                    options.suite));
  std::reverse(rows.begin(), rows.end());
  if (options.recent < 1)
    throw input_error("trend: --recent 0 counts no run as new (1 at least: the newest)");
  Trend t;
  t.suite = options.suite;
  t.recent = options.recent;
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
      find_changes(series, settings, options.detection, options.recent);
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

std::vector<WorseChange> first_found_worse_changes(const Trend& t) {
  std::vector<WorseChange> out;
  for (const auto& s : t.series)
    for (const auto& c : s.changes)
      if (c.worse && c.first_found) out.push_back({&s, &c});
  return out;
}

nlohmann::ordered_json to_json(const Trend& t) {
  nlohmann::ordered_json j;
  j["schema_version"] = 1;
  j["suite"] = t.suite;
  j["recent"] = t.recent;
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
           {"p_permutation", c.p_permutation ? nlohmann::ordered_json(*c.p_permutation) : nullptr},
           {"p_t", c.p_t},
           {"worse", c.worse},
           {"first_found", c.first_found},
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
