#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace rocehil::reports {

// The charts of report.html, drawn from run.json's cases (svg_chart.hpp draws them). Each
// returns a <div class="charts"> of <figure>s, or nothing when there is nothing to draw.

// Across a test's cases: busbw against message size per QP count when the test sweeps sizes,
// otherwise busbw by case when it has several.
std::string test_charts(const std::vector<const nlohmann::json*>& cases);

// One case, from its last measured attempt: the iteration time distribution, RoCE bytes per
// capture point (ECMP balance when the points are spines), CNP/PFC/ECN timelines, per-QP rates
// and the pairwise matrix.
std::string case_charts(const nlohmann::json& c);

}  // namespace rocehil::reports
