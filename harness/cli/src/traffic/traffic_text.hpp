#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "rocehil/run/point_to_point.hpp"

namespace rocehil::cli {

// What 'rocehil traffic client' prints for people; its JSON is run::point_to_point_json.
std::string describe_test(const run::PointToPointConfig& config, const std::string& server_name);
std::string format_stats_line(const agent::StatsEvent& stats);
std::string format_point_to_point(const run::PointToPointConfig& config,
                                  const run::PointToPointResult& result);
// 0 when both sides finished without errors and every byte arrived intact, 1 otherwise.
int point_to_point_exit_code(const run::PointToPointResult& result);

}  // namespace rocehil::cli
