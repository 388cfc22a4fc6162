#pragma once

// `rocehil selftest`: the acceptance suite filled in for two hosts, run as an ordinary run, and
// read back as a checklist (selftest.hpp) written beside it as selftest.json.

#include <atomic>
#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "rocehil/preflight/deploy.hpp"
#include "rocehil/run/events.hpp"
#include "rocehil/run/selftest.hpp"

namespace rocehil::run {

struct SelftestOptions {
  std::string inventory_file;
  std::vector<std::string> hosts;     // exactly two
  std::vector<std::string> captures;  // capture points on their paths; may be empty
  std::string suite_file;             // empty: the built-in suites/acceptance.yaml
  std::string reports_dir = "reports";
  std::string history_file;
  // --deploy: how agents are put on hosts before anything runs (preflight/deploy.hpp).
  preflight::DeployMode deploy = preflight::DeployMode::none;
  std::vector<preflight::DebPackage> deploy_packages;
  std::chrono::seconds timeout{30};
  std::string command_line;  // for run.json
};

struct SelftestOutcome {
  int run_exit_code = 0;  // the suite run's
  std::string run_id;     // empty when the run ended before its directory existed
  // Set once the run is on disk: the checklist, and where selftest.json was written.
  std::optional<SelftestReport> report;
  std::string file;
  std::string selftest_json;
  bool interrupted = false;

  // The run's own 3 when interrupted or when nothing was recorded; else the checklist's.
  int exit_code() const;
};

// Throws rocehil::Error (bad input) for hosts or capture points the inventory does not have, and
// for a suite file that cannot be read.
SelftestOutcome run_selftest(const SelftestOptions& options, const std::atomic<bool>& interrupt,
                             RunEvents& events);

}  // namespace rocehil::run
