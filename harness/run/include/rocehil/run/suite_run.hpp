#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "rocehil/inventory/inventory.hpp"
#include "rocehil/preflight/deploy.hpp"
#include "rocehil/reports/run_kind.hpp"
#include "rocehil/run/events.hpp"
#include "rocehil/run/fabric_settings.hpp"
#include "rocehil/settings/assignment.hpp"

namespace rocehil::run {

// `rocehil run`: a suite against an inventory, every case, graded, into reports/<run-id>/.
struct SuiteRunOptions {
  std::string suite_file;
  std::string inventory_file;
  std::string reports_dir = "reports";
  std::string history_file;  // the run history (SQLite); empty: <reports_dir>/history.db
  std::string only;          // a glob over case ids ("allreduce/*"); empty: every case
  // Tests of the suite the hosts cannot take (selftest: UD on soft hosts, the GPU test on hosts
  // without GPUs): their cases are not run, and every file of the run lists them as skipped with
  // the reason, so run.json, junit.xml, the history and the exit status say what was printed.
  struct SkippedTest {
    std::string test;
    std::string reason;
  };
  std::vector<SkippedTest> skip;
  // --hosts: a selection expression; only the hosts it picks stay in the inventory (empty: all).
  std::string hosts;
  // --launcher: how every host's programs start, over the inventory's (unset: the inventory's).
  std::optional<inventory::Launcher> launcher;
  // --drain-failed TAG: after the run, drain the Slurm nodes its failures name (drain.hpp).
  std::optional<std::string> drain_tag;
  // --deploy: how agents are put on hosts before anything runs (preflight/deploy.hpp).
  preflight::DeployMode deploy = preflight::DeployMode::none;
  std::vector<preflight::DebPackage> deploy_packages;
  std::chrono::seconds timeout{30};  // each phase's replies, and silence during traffic
  std::size_t fanout = 32;           // hosts preflighted at once
  // Poll the switches that have snmp settings before and after each case (--no-switches: no).
  bool switches = true;
  // --set KEY=VALUE: fabric settings over the suite's `settings:` (the later wins), applied to
  // every host the run uses before its first case and put back after its last.
  std::vector<settings::Assignment> settings;
  // The testbed's switches when the inventory is a testbed's (the command line knows); unset,
  // a switch.* setting is refused.
  std::optional<FabricLinkAccess> fabric_links;
  // --baseline: "last-qualified" or a run id of the history, over the suite's `baseline:`.
  std::string baseline;
  // --keep-captures: never, failed or always, over the suite's capture.keep (empty: the suite's).
  std::string keep_captures;
  std::string command_line;
  // What started the run: full for `rocehil run`; bisect, selftest or calibrate for the
  // commands that run suites themselves. The run's kind is this, or --only / --set's
  // (reports::kind_of_run), recorded in run.json and the history: only full runs are
  // `last-qualified` baselines and trend points.
  reports::RunKind started_as = reports::RunKind::full;
};

// Loads and cross-checks the suite and inventory (bad input throws rocehil::Error before anything
// runs), preflights every host the suite uses, then runs the cases in file order. run.json is
// rewritten as each case is measured (before it is graded) and graded; junit.xml at the end, and
// the run recorded in the history.
// `interrupt` (SIGINT, SIGTERM) ends the running case, leaves the rest not run, and gives 3.
// `events` hears where the run is (events.hpp); it prints nothing of its own.
// Returns the exit status: 0 qualified, 1 a threshold failed, 3 a host, agent or capture failed;
// and in `run_id`, when given, the run's id (empty when it ended before its directory existed).
int run_suite(const SuiteRunOptions& options, const std::atomic<bool>& interrupt, RunEvents& events,
              std::string* run_id = nullptr);

}  // namespace rocehil::run
