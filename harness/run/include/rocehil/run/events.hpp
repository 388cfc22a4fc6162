#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "rocehil/preflight/preflight.hpp"
#include "rocehil/reports/run_record.hpp"
#include "rocehil/run/drain.hpp"
#include "rocehil/run/fabric_settings.hpp"

namespace rocehil::run {

// Where a suite run is, as it happens. The orchestrator prints nothing: it calls these, in this
// order, and the command line turns them into lines, progress bars and tables (a test can record
// them instead). Every call has an empty default, so a watcher overrides only what it shows.
//
//   baseline_chosen (when one is named), baseline_lacks_cases (when it does), run_started,
//   preflight_progress..., preflight_ended, (when the inventory names a controller)
//   agents_joining..., agents_joined, then per test: test_started, per case (case_started,
//   case_progress..., case_retried..., case_ended), test_ended; then run_ended. history_not_updated
//   may come before run_ended.
// A host whose agent did not dial in to the run, and why (its launcher's words, or silence).
struct MissingAgent {
  std::string host;
  std::string why;
};

class RunEvents {
 public:
  struct Start {
    std::string suite_name, suite_file;
    std::string inventory_name, inventory_file;
    std::size_t cases = 0, hosts = 0;
    std::string directory;  // reports/<run-id>: run.json lists every case as not run already
  };

  virtual ~RunEvents() = default;
  // The baseline run baseline.<metric> reads from: `asked` ("last-qualified" or a run id) came
  // from `origin` (--baseline, or the suite file's baseline:).
  virtual void baseline_chosen(const std::string& /*run_id*/, const std::string& /*asked*/,
                               const std::string& /*origin*/) {}
  // The baseline run has no case of these ids, which this run grades against it (it was an
  // --only run or a bisect step, `kind` says, or the suite has grown since): their thresholds
  // naming baseline.<metric> grade error.
  virtual void baseline_lacks_cases(const std::string& /*run_id*/,
                                    const reports::RunKindInfo& /*kind*/,
                                    const std::vector<std::string>& /*cases*/) {}
  virtual void run_started(const Start& /*start*/) {}
  // One call per host probed, from the preflight's threads one at a time.
  virtual void preflight_progress(std::size_t /*done*/, std::size_t /*total*/) {}
  // `failed` hosts were unreachable or failed a check: when there are any, nothing runs.
  virtual void preflight_ended(const preflight::CheckReport& /*report*/, std::size_t /*failed*/) {}
  // Agents that dial home (the inventory's controller): how many of the run's hosts have joined
  // while they start; then who joined, how long it took, and who did not (the run stops then).
  virtual void agents_joining(std::size_t /*joined*/, std::size_t /*total*/) {}
  virtual void agents_joined(std::size_t /*joined*/, double /*seconds*/,
                             const std::vector<MissingAgent>& /*missing*/) {}
  // One line each, whenever it happens: a connection refused (not the run's, or a host twice),
  // an agent lost mid-run. The run goes on; a case that needed a lost agent fails naming it.
  virtual void agent_refused(const std::string& /*peer*/, const std::string& /*why*/) {}
  virtual void agent_lost(const std::string& /*host*/, const std::string& /*why*/) {}
  // A test of the suite begins: `cases` of its cases were selected.
  virtual void test_started(const std::string& /*test*/, std::size_t /*cases*/) {}
  // `index` counts the test's cases from 0.
  virtual void case_started(const reports::CaseRecord& /*c*/, std::size_t /*index*/) {}
  // The running attempt's measured part, 0 to 1.
  virtual void case_progress(double /*fraction*/) {}
  // The attempt failed a threshold that allows a retry: the case runs again.
  virtual void case_retried(const reports::CaseRecord& /*c*/) {}
  // Measured, written to run.json and graded.
  virtual void case_ended(const reports::CaseRecord& /*c*/, std::size_t /*index*/) {}
  virtual void test_ended() {}
  // The run is on disk; only its row in the history is missing.
  virtual void history_not_updated(const std::string& /*why*/) {}
  // Fabric settings (fabric_settings.hpp): journals a killed controller left, put back before
  // the run; the run's settings applied (read back) and, at its end, put back (or why not).
  virtual void settings_left_restored(const SettingsRestored& /*restored*/) {}
  // A journal another run holds (alive, or not judged from here): left alone, not put back.
  virtual void settings_in_use(const JournalInUse& /*in_use*/) {}
  virtual void settings_applied(const std::vector<SettingInForce>& /*in_force*/) {}
  virtual void settings_failed(const std::string& /*why*/) {}  // the run stops before traffic
  virtual void settings_restored(const std::vector<SettingsRestored>& /*restored*/) {}
  virtual void settings_not_restored(const std::string& /*why*/) {}
  // Settings the run set read otherwise after an attempt (or at its end): changed under the run.
  virtual void settings_changed_under_run(const std::vector<SettingDrift>& /*drift*/) {}
  // run.json, junit.xml and report.html are written; `directory` is where.
  // --drain-failed: what was drained (or scontrol's refusal) and the failures naming no node.
  virtual void nodes_drained(const std::vector<DrainResult>& /*drained*/,
                             const std::vector<std::string>& /*not_drained*/) {}
  virtual void run_ended(const reports::RunRecord& /*record*/, const std::string& /*directory*/) {}
};

}  // namespace rocehil::run
