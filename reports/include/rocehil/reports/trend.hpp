#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "rocehil/reports/change_points.hpp"
#include "rocehil/reports/history.hpp"
#include "rocehil/reports/settings.hpp"
#include "rocehil/suites/metrics.hpp"

namespace rocehil::reports {

// A suite's runs over time, from the history: per case and metric the series of the runs' values
// (each run's the median of its repeats; a run that did not measure it is a gap, never a 0), the
// change points in it (E-divisive means, change_points.hpp), each with its size and what changed
// between the runs on either side of it (settings, firmware, drivers, kernel, versions).

struct TrendOptions {
  std::string suite;
  int last = 60;                     // the newest runs of the suite, at most
  std::string case_glob = "*";       // fnmatch(3) over case ids
  std::vector<std::string> metrics;  // empty: each case's headline (busbw_gbps, else lat_p99_us)
  ChangePointOptions detection{.max_p = 0.01};
  // The kinds of run that are points (run_kind.hpp): full runs unless asked; a bisect step or an
  // --only run is not the suite's night.
  RunKinds kinds = RunKinds::full_runs();
};

struct TrendRun {
  std::string run_id, started_at;
  std::optional<int> exit_code;
};

struct TrendChange {
  std::size_t run = 0;     // in Trend::runs: the first run after the change
  std::size_t before = 0;  // in Trend::runs: the last run before it that measured the metric
  double median_before = 0, median_after = 0;  // of the segments on either side
  std::optional<double> change_pct;            // empty when median_before is 0
  double p = 0;
  bool worse = false;                  // in the metric's bad direction (suites::better_when)
  std::vector<SettingChange> changed;  // from run `before` to run `run`
};

struct TrendSeries {
  std::string case_id, metric;
  suites::Better better = suites::Better::neither;
  std::vector<std::optional<double>> values;  // one per Trend::runs
  std::vector<TrendChange> changes;
};

// How much of a series there is, for summaries: runs that measured it, its first and last
// values, and its changes for the worse.
struct SeriesSpan {
  std::size_t measured = 0, worse = 0;
  std::optional<double> first, last;
};
SeriesSpan span_of(const TrendSeries& s);

struct Trend {
  std::string suite;
  std::vector<TrendRun> runs;       // oldest first
  std::vector<TrendSeries> series;  // in the newest run's case order, then metric
};

// Throws rocehil::Error (bad input): no runs of the suite in the history, last below 2.
Trend trend(const History& history, const TrendOptions& options);

// The changes that made a metric worse and start in one of the newest `runs` runs: what a
// nightly job fails on (--fail-on-change worse).
struct WorseChange {
  const TrendSeries* series = nullptr;
  const TrendChange* change = nullptr;
};
std::vector<WorseChange> worse_changes_in_last(const Trend& t, std::size_t runs);

nlohmann::ordered_json to_json(const Trend& t);

}  // namespace rocehil::reports
