#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "rocehil/reports/run_record.hpp"

namespace rocehil::reports {

// What a case's repeats come to. A case runs `repeats:` times, each repeat a sample graded on
// its own; a repeat that fails a threshold with `retry:` runs again, and its last attempt
// replaces the ones before. The case is as bad as its worst repeat. Its number is the median of
// its repeats, as the history, trend and compare take it. Every writer (the console, junit.xml,
// report.html, run.json) takes what it says about repeats from here, so they all show one number
// and quote the same repeat.

// The last attempt of each repeat, in repeat order: what is graded and what is a sample.
std::vector<const Attempt*> final_attempts(const CaseRecord& c);

// Values a metric took over the repeats that measured it.
struct Spread {
  double median = 0, low = 0, high = 0;
  std::size_t samples = 0;
};
// Empty when no value is finite; values that are not are left out.
std::optional<Spread> spread_of(const std::vector<double>& values);

// The number a person looks at first: busbw_gbps ("busbw", or "bw" for a point-to-point rate,
// which is not a bus bandwidth), else lat_p99_us.
struct Headline {
  std::string metric;  // busbw_gbps, lat_p99_us
  std::string label;   // busbw, bw, lat p99
  std::string unit;    // Gbit/s, us
  Spread spread;
};

// A threshold over the repeats: its worst repeat decides it and is the one quoted.
struct ThresholdOverRepeats {
  suites::ThresholdResult worst;  // the worst repeat's result
  int repeat = 0;                 // that repeat, numbered from 0 as in run.json
  int graded = 0;                 // repeats graded on it (a repeat not measured is not)
  int at_verdict = 0;             // of those, how many came to the worst's verdict
};

struct RepeatsSummary {
  int repeats = 0;  // repeats run
  int retries = 0;  // attempts run again after a failure (retry:), all repeats together
  std::optional<Headline> headline;
  std::vector<ThresholdOverRepeats> thresholds;  // in the suite's order
  // The first repeat the fabric failed (Fault::fabric), else the first that measured nothing, and
  // why: what a failure by the fabric or an error names.
  std::optional<AttemptError> error;
  int error_repeat = 0;
};

RepeatsSummary summarize_repeats(const CaseRecord& c);

// "busbw 0.31 Gbit/s, median of 5 repeats (0.229 to 0.395)"; one repeat: "busbw 0.31 Gbit/s";
// empty without a headline.
std::string headline_text(const RepeatsSummary& s);

// A threshold and what its worst repeat measured: "busbw_gbps >= 0.5: busbw_gbps = 0.25, needs
// >= 0.5"; over repeats, "busbw_gbps >= 0.3: failed in 2 of 5 repeats; the worst, repeat 3:
// busbw_gbps = 0.229, needs >= 0.3" (repeats numbered from 1 for people).
std::string threshold_text(const ThresholdOverRepeats& t, int repeats);

// "1 retry", "2 retries".
std::string retries_text(int retries);

// "5 repeats", "5 repeats, 2 retries after a failure", "1 retry after a failure"; empty for one
// repeat that was not retried.
std::string repeats_text(const RepeatsSummary& s);

}  // namespace rocehil::reports
