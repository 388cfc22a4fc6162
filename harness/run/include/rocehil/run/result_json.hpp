#pragma once

// The results of a point-to-point test and of a collective as JSON (schema_version 1): what
// `traffic client --json` and `traffic collective --json` print, and each case's raw section in
// run.json.

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "rocehil/run/collective_run.hpp"
#include "rocehil/run/perftest_pair.hpp"
#include "rocehil/run/point_to_point.hpp"

namespace rocehil::run {

nlohmann::json point_to_point_json(const PointToPointConfig& config,
                                   const PointToPointResult& result);

// engine perftest: the request of each side, what it ran (the command's words), perftest's
// version, exit code, report and error, and its output's last lines.
nlohmann::json perftest_pair_json(const PerftestPairConfig& config,
                                  const PerftestPairResult& result);

// The job, the ranks, and every case with its summary, per-rank and per-QP numbers (peer, UDP
// source port, bytes, counters), and the data check. Each rank's waits: `wait_ms` (their sum),
// `longest_wait` {step, ms}, and `wait_ms_per_step` only when the rank has at most
// max_steps_in_detail steps (absent above: a 4,096-rank ring has 8,190 a rank).
inline constexpr std::size_t max_steps_in_detail = agent::max_steps_reported;
nlohmann::json collective_json(const std::vector<CollectiveRankInfo>& ranks,
                               const std::string& provider, const std::string& placement,
                               const std::vector<CollectiveCase>& cases);

}  // namespace rocehil::run
