#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>

#include "rocehil/capture/analysis.hpp"

namespace rocehil::capture {

// The machine-readable form of an Analysis (schema_version 1). `max_flows` caps the "flows"
// list (the biggest first); "flow_count" always gives the total, so a cut is visible.
inline constexpr int analysis_schema_version = 1;
nlohmann::json to_json(const Analysis& analysis, std::size_t max_flows = SIZE_MAX);

}  // namespace rocehil::capture
