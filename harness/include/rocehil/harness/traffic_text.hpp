#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "rocehil/harness/point_to_point.hpp"

namespace rocehil::harness {

// What 'rocehil traffic client' prints: for people, and as JSON (schema_version 1).
std::string describe_test(const PointToPointConfig& config, const std::string& server_name);
std::string format_stats_line(const StatsEvent& stats);
std::string format_point_to_point(const PointToPointConfig& config,
                                  const PointToPointResult& result);
nlohmann::json point_to_point_json(const PointToPointConfig& config,
                                   const PointToPointResult& result);
// 0 when both sides finished without errors and every byte arrived intact, 1 otherwise.
int point_to_point_exit_code(const PointToPointResult& result);

}  // namespace rocehil::harness
