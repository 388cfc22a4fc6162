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
  ChangePointOptions detection;
  // The newest runs that count as new: a change is first found now when the series without
  // them shows no change there (TrendChange::first_found).
  std::size_t recent = 1;
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
  std::optional<double> p_permutation;  // the tests behind p (ChangePoint)
  double p_t = 1;
  bool worse = false;  // in the metric's bad direction (suites::better_when)
  // Not found in the series without the newest TrendOptions::recent runs (nor within
  // min_segment - 1 runs of here, the same way): the newest run is the first that tells it.
  bool first_found = false;
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
  std::size_t recent = 1;           // TrendOptions::recent
  std::vector<TrendRun> runs;       // oldest first
  std::vector<TrendSeries> series;  // in the newest run's case order, then metric
};

// The changes in one series of runs' values (oldest first; a gap is empty), each with its
// medians, size, direction and first_found, `changed` left empty: what trend() does for each
// series before it reads the settings of the runs beside a change. Pure, for replays.
std::vector<TrendChange> changes_in(const std::vector<std::optional<double>>& values,
                                    suites::Better better, const ChangePointOptions& detection,
                                    std::size_t recent = 1);

// Throws rocehil::Error (bad input): no runs of the suite in the history, last below 2.
Trend trend(const History& history, const TrendOptions& options);

// The changes that made a metric worse and were first found with the newest runs: what a
// nightly job fails on (--fail-on-change worse). Each change fails one job, the first whose run
// makes it significant, wherever it starts: a noisy step may take more nights to be told than a
// clear one.
struct WorseChange {
  const TrendSeries* series = nullptr;
  const TrendChange* change = nullptr;
};
std::vector<WorseChange> first_found_worse_changes(const Trend& t);

nlohmann::ordered_json to_json(const Trend& t);

}  // namespace rocehil::reports
