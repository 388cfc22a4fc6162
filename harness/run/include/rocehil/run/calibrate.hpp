#pragma once

// `rocehil calibrate`: rocehil's engine against perftest on one pair of hosts, the same NICs,
// sizes and QPs, rounds interleaved (workloads calibrate_bw and calibrate_lat), run as an
// ordinary suite run and read back as one row per size.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "rocehil/preflight/deploy.hpp"
#include "rocehil/run/events.hpp"

namespace rocehil::run {

struct CalibrateOptions {
  std::string inventory_file;
  std::vector<std::string> hosts;                          // exactly two: client, server
  std::vector<std::uint64_t> sizes{4096, 65536, 1 << 20};  // bw
  std::uint32_t qps = 1;
  std::string opcode = "write";  // write | read | send
  int rounds = 3;
  double seconds = 5;                    // bw, per run (whole seconds, as perftest takes them)
  std::uint64_t lat_iterations = 10000;  // lat, per run
  std::uint64_t lat_size = 8;
  bool bw = true, lat = true;
  double bw_tolerance = 0.05;   // rocehil's bandwidth within 5% of perftest's
  double lat_tolerance = 0.10;  // rocehil's median latency within 10% of perftest's
  std::string reports_dir = "reports";
  std::string history_file;
  // --deploy: how agents are put on hosts before anything runs (preflight/deploy.hpp).
  preflight::DeployMode deploy = preflight::DeployMode::none;
  std::vector<preflight::DebPackage> deploy_packages;
  std::chrono::seconds timeout{30};
  std::string command_line;  // for run.json
};

// The suite `rocehil calibrate` runs, as YAML `rocehil run` takes again. Throws rocehil::Error
// (bad input) for options no suite could hold (hosts, sizes, tolerances).
std::string calibration_suite(const CalibrateOptions& options);

// One size of one workload, from run.json: each engine's median and spread over its rounds, the
// ratio, and the case's outcome and why.
struct CalibrationRow {
  std::string workload;  // bw | lat
  std::uint64_t size = 0;
  std::string unit;                       // Gbit/s | us
  std::vector<double> rocehil, perftest;  // per round
  std::optional<double> rocehil_median, perftest_median, ratio, spread;
  std::string outcome;  // pass | fail | error | ...
  std::string detail;   // the failed threshold, or the error's host, phase and message
};
std::vector<CalibrationRow> calibration_rows(const nlohmann::json& run_record);

struct CalibrateOutcome {
  int exit_code = 0;  // the suite run's: 0 agree, 1 disagree, 3 could not tell (perftest)
  std::string run_id;
  std::string suite_file;
  std::vector<CalibrationRow> rows;
};

CalibrateOutcome run_calibrate(const CalibrateOptions& options, const std::atomic<bool>& interrupt,
                               RunEvents& events);

}  // namespace rocehil::run
