#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "rocehil/reports/run_kind.hpp"
#include "rocehil/reports/run_record.hpp"
#include "rocehil/reports/settings.hpp"

struct sqlite3;

namespace rocehil::reports {

// The run history (reports/history.db by default): every run's identity, the hashes of its suite
// and inventory, its settings snapshot and versions; each case's outcome and threshold verdicts;
// and every measured sample (metric values of each repeat's final attempt), so runs can be listed
// and compared. SQLite, one file; recording a run again replaces it. The schema's version is the
// database's user_version; a newer one is refused rather than misread, an older one is migrated
// in place when opened (schema 1 had no run kinds: they are read from each run's command line
// and the bisections' steps, else unknown, counted as full).
class History {
 public:
  // Opens (creating when missing) the database and its tables. Throws rocehil::Error naming the
  // path and SQLite's reason.
  static History open(const std::string& path);
  ~History();
  History(History&& other) noexcept;
  History& operator=(History&&) = delete;
  History(const History&) = delete;
  History& operator=(const History&) = delete;

  void record(const RunRecord& run);

  // What a nightly dashboard plots for a run, each over the cases that measured it, a case
  // counting by the median of its repeats (as everywhere, repeats.hpp): the lowest busbw, the
  // highest p99 latency, the sum of the CNPs the QPs handled and of the PFC storms. Empty when
  // no case measured it.
  struct Headline {
    std::optional<double> busbw_gbps, lat_p99_us, cnps, pfc_storms;
  };
  struct RunRow {
    std::string run_id, started_at, suite;
    std::optional<int> exit_code;
    bool interrupted = false;
    int cases = 0, passed = 0, failed = 0, errors = 0, not_run = 0, skipped = 0;
    RunKindInfo kind;
    Headline headline;
  };
  // The newest runs first, at most `last`; only the suite's when `suite` is set, and only those
  // of `kinds` (every kind by default: a listing shows them all, each with its kind; a baseline
  // or a trend asks for RunKinds::full_runs()). Without `headlines` their Headline is left empty
  // (a trend over hundreds of runs does not need it).
  std::vector<RunRow> runs(const std::optional<std::string>& suite, int last, bool headlines = true,
                           const RunKinds& kinds = RunKinds::all()) const;

  // `last-qualified`: the newest run of `suite` that exited 0 and was not interrupted, among
  // `kinds` (full runs: a bisect step or an --only run qualifies for what it ran, not for the
  // suite). Empty when there is none.
  std::optional<std::string> last_qualified(const std::string& suite,
                                            const RunKinds& kinds = RunKinds::full_runs()) const;

  // A run id as given, or the one run whose id starts with `prefix`. Throws rocehil::Error
  // (bad input) naming the history and what matched when there is not exactly one.
  std::string resolve(const std::string& prefix) const;

  // Everything recorded of one run, for comparisons and exports.
  struct CaseRow {
    std::string id, test, workload, outcome;
  };
  struct RunSnapshot {
    RunRow row;
    std::string finished_at, suite_file, inventory_file, rocehil_version;
    Settings settings;
    std::vector<CaseRow> cases;  // in the suite's order
    // case id -> metric -> the value of each repeat that measured it, in repeat order
    std::map<std::string, std::map<std::string, std::vector<double>>> samples;
  };
  RunSnapshot snapshot(const std::string& run_id) const;

  // What a trend reads of a run, and no more: its cases in the suite's order and, per case, the
  // values of `metrics` (every metric when empty), one per repeat in repeat order.
  struct RunValues {
    std::vector<std::string> cases;
    std::map<std::string, std::map<std::string, std::vector<double>>> samples;
  };
  RunValues values(const std::string& run_id, const std::vector<std::string>& metrics) const;
  // The settings snapshot recorded with a run (empty when the run is not in the history).
  Settings recorded_settings(const std::string& run_id) const;

  // The values a metric took in a case of a run, one per repeat, in repeat order.
  std::vector<double> samples(const std::string& run_id, const std::string& case_id,
                              const std::string& metric) const;

  // Bisections (rocehil bisect): what was searched, and every step's candidate, run and
  // verdict as it is decided, so a bisection killed mid-way resumes where it stopped.
  struct BisectRecord {
    std::string id;  // from what defines the search: suite, inventory, candidates, --apply
    std::string suite_file;
    std::vector<std::string> candidates;
    std::string apply;
    std::string started_at, finished_at, first_bad;  // the last two empty until it ends
  };
  struct BisectStep {
    int step = 0;
    std::size_t index = 0;  // in candidates
    std::string candidate, run_id;
    bool bad = false;
  };
  void begin_bisect(const BisectRecord& b);  // a no-op when the id is recorded already
  void forget_bisect(const std::string& id);
  std::optional<BisectRecord> bisect(const std::string& id) const;
  std::vector<BisectStep> bisect_steps(const std::string& id) const;
  void record_bisect_step(const std::string& id, const BisectStep& step);
  void finish_bisect(const std::string& id, const std::string& first_bad,
                     const std::string& finished_at);

 private:
  std::vector<RunRow> query_runs(const std::optional<std::string>& suite,
                                 const std::optional<std::string>& run_id, int last,
                                 bool headlines = true,
                                 const RunKinds& kinds = RunKinds::all()) const;
  void upgrade();
  void migrate_kinds();
  Headline headline(const std::string& run_id) const;
  History(sqlite3* db, std::string path) : db_(db), path_(std::move(path)) {}
  sqlite3* db_ = nullptr;
  std::string path_;
};

}  // namespace rocehil::reports
