#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "rocehil/reports/run_kind.hpp"
#include "rocehil/suites/grade.hpp"
#include "rocehil/suites/starvation.hpp"
#include "rocehil/suites/threshold.hpp"

namespace rocehil::reports {

// The record of one `rocehil run`: what ran, on what, what it measured and how it was graded.
// It is written to run.json as cases finish (raw results before their grade), so an interrupted
// or crashed run still leaves everything it measured on disk.

inline constexpr int run_schema_version = 1;

// Whose fault an attempt's error is, which decides its grade.
enum class Fault : std::uint8_t {
  // The harness could not measure: a host, an agent, a capture or the setup failed. The case is
  // an error (exit 3): it says nothing about the fabric, and a bisection stops on it.
  infrastructure,
  // The traffic failed because the fabric did not carry it (traffic::caused_by_fabric: the
  // transport's retries ran out). The fabric failed the test, in every workload alike: the case
  // fails (exit 1), as a failed threshold does.
  fabric,
};
std::string_view to_string(Fault fault);  // "infrastructure", "fabric"

// Why an attempt produced no measurement that stands: the host and the phase name where to look.
struct AttemptError {
  std::string host;   // "h3", "cap", or empty when no single host is to blame
  std::string phase;  // launch, hello, capture start, setup, traffic, capture stop, analysis
  std::string message;
  Fault fault = Fault::infrastructure;
};

// A capture point's pcapng files of one attempt, kept in the run directory (capture.keep), or
// why they could not be.
struct KeptCapture {
  std::string point;
  std::string host;                // the capture host that wrote them
  std::vector<std::string> files;  // relative to the run directory, oldest first
  std::uint64_t bytes = 0;
  std::string not_kept;  // set when they were to be kept and are not: the reason
};

// One run of a test case. A case runs `repeats` times (samples for comparisons, numbered from
// 0), and a failing run may be retried; each is an attempt.
struct Attempt {
  int repeat = 0;
  std::int64_t start_ns = 0;  // wall clock, Unix ns
  double seconds = 0;
  std::optional<AttemptError> error;
  suites::Values metrics;                         // what thresholds may name
  suites::Unmeasured unmeasured;                  // metrics it could not measure, and why
  suites::Attribution where;                      // where some metrics' values came from
  nlohmann::json raw = nlohmann::json::object();  // the agents' reports, as they came
  std::optional<suites::CaseGrade> grade;         // set once graded
  std::vector<KeptCapture> captures_kept;         // set once graded, when captures are kept
  // What bent timing over the traffic, each agent's (by host) and the controller's, and why the
  // case's timing numbers may be the scheduler's (suites::starvation_reasons; empty: nothing
  // says so). run.json: "cpu" {host: {...}, "controller": {...}} and "cpu_starved".
  std::vector<suites::SchedulingSeen> cpu;
  std::vector<std::string> cpu_starved;
};

struct CaseRecord {
  std::string id;    // "allreduce/qps=8"
  std::string test;  // the suite test's name
  std::string workload;
  nlohmann::json parameters = nlohmann::json::object();  // size, qps, strategy, placement, ...
  std::vector<std::string> hosts;                        // the hosts it ran on
  std::vector<std::string> captures;                     // capture points running beside it
  bool expect_fail = false;
  suites::Values names;  // n, hosts, qps, size, link_gbps: what limits may use
  // Set when the case is not run on purpose: why the hosts cannot take it. Its outcome is then
  // skipped, and the files say so with this reason.
  std::string skip_reason;
  std::vector<Attempt> attempts;
  suites::Outcome outcome = suites::Outcome::not_run;
  // The fabric settings its test set for it (the test's `settings:`), as RunRecord's
  // fabric_settings: asked, in_force, changes, and error when they could not be applied. Null
  // when the case ran under the run's settings.
  nlohmann::json fabric_settings = nullptr;
};

struct RunRecord {
  std::string run_id;
  std::string started_at;   // ISO 8601 UTC
  std::string finished_at;  // empty while running
  std::string rocehil_version;
  std::string command_line;
  // Full, --only, --set, a bisect step, ... (run_kind.hpp): only full runs are baselines and
  // points of a trend unless a reader asks for more.
  RunKindInfo kind;
  std::string suite_file;
  std::string suite_name;
  std::string suite_text;  // the file as it was read
  std::string inventory_file;
  std::string inventory_text;
  nlohmann::json preflight = nlohmann::json::object();  // per host: reachable, facts, problems
  // The fabric settings the run set (--set, the suite's settings:): asked (name, value, origin),
  // in_force (host, netdev, name, value as read back), changes (before, after), restored. Null
  // when the run set none.
  nlohmann::json fabric_settings = nullptr;
  // The baseline run baseline.<metric> read from: run_id, started_at, asked ("last-qualified" or
  // what was given) and origin (--baseline or the suite's baseline:). Null when none was named.
  nlohmann::json baseline = nullptr;
  std::vector<CaseRecord> cases;
  bool interrupted = false;
  std::optional<int> exit_code;  // set when the run is over
};

// The outcome of a case: each repeat counts by its last attempt (a retry replaces what it
// retried); an attempt that failed to measure is an error, one the fabric failed (Fault::fabric)
// a failure, otherwise its grade; the worst repeat (fail, error, warn, pass) is seen through
// expect_fail.
suites::Outcome outcome_of(const CaseRecord& c);

// Counts of outcomes, for the summary line: "7 passed, 1 failed, 1 expected failure".
struct OutcomeCounts {
  int pass = 0, warn = 0, fail = 0, error = 0, expected_fail = 0, unexpected_pass = 0, not_run = 0,
      skipped = 0;
};
OutcomeCounts count_outcomes(const RunRecord& run);

// Why the case's timing numbers may be the scheduler's rather than the fabric's: each counted
// attempt's reasons (Attempt::cpu_starved), once each, "repeat 2: " before them when the case
// has repeats. Empty: none of its attempts was starved.
std::vector<std::string> starved_reasons(const CaseRecord& c);
std::string summary_line(const OutcomeCounts& counts);

}  // namespace rocehil::reports
