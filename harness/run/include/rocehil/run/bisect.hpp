#pragma once

// `rocehil bisect`: binary search over ordered candidates (firmware versions, DCQCN or PFC
// settings, link rates) for the first one that makes the suite fail. Each step applies a
// candidate with the user's command or as a fabric setting (--set KEY={candidate}, put back after
// the step's run), runs the suite, and is recorded in the run history before the next, so a
// bisection that is killed resumes where it stopped when started again.

#include <atomic>
#include <cstddef>
#include <string>
#include <vector>

#include "rocehil/reports/history.hpp"
#include "rocehil/run/events.hpp"
#include "rocehil/run/suite_run.hpp"

namespace rocehil::run {

struct BisectOptions {
  SuiteRunOptions run;
  std::string candidates_file;  // one per line, the first known good, the last known bad
  std::string apply;            // sh command with {candidate}; empty: none
  // KEY={candidate}: the candidate as a fabric setting (settings catalogue), applied to every
  // host (or the testbed's switches) for its step's run and put back after it; empty: none.
  // At least one of apply and set.
  std::string set;
  int apply_timeout_s = 600;
  bool restart = false;  // forget this bisection's recorded steps
};

// Where a bisection is; every call has an empty default.
class BisectEvents {
 public:
  struct Start {
    std::string id;
    std::vector<std::string> candidates;
    std::size_t runs_needed = 0;
    std::vector<reports::History::BisectStep> recorded;  // resumed from the history
  };
  virtual ~BisectEvents() = default;
  virtual void bisect_started(const Start& /*start*/) {}
  virtual void applying(int /*step*/, const std::string& /*candidate*/,
                        const std::string& /*command*/) {}
  virtual void step_decided(const reports::History::BisectStep& /*step*/) {}
  // Each step's suite run reports here.
  virtual RunEvents& run_events() = 0;
};

struct BisectOutcome {
  std::string id;
  std::string history;  // the database the steps are in
  // Empty when the search stopped before the end: `stopped` says why (an interrupt, or a run
  // that could not measure), and the same command resumes it.
  std::string first_bad, last_good;
  std::string stopped;
  std::vector<reports::History::BisectStep> steps;  // every step, once it has ended
};

// Throws rocehil::Error: bad input for the candidates file, --apply or the reports directory;
// infrastructure when --apply fails for a candidate.
BisectOutcome run_bisect(const BisectOptions& options, const std::atomic<bool>& interrupt,
                         BisectEvents& events);

// The user's command with every {candidate} replaced by the candidate, quoted for sh: a
// candidate is data, never shell syntax.
std::string apply_command(const std::string& pattern, const std::string& candidate);

}  // namespace rocehil::run
