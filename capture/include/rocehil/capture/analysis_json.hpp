#pragma once

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "rocehil/capture/analysis.hpp"

namespace rocehil::capture {

inline constexpr int analysis_schema_version = 1;

// The machine-readable form of an Analysis (schema_version 1), as text: one top-level member per
// line, then the flows and the timeline bins one per line. They are written straight out rather
// than through a JSON DOM because a capture can hold hundreds of thousands of flows.
// `max_flows` caps the "flows" list (the biggest first); "flow_count" always gives the total,
// so a cut is visible. Timeline bins with nothing in them are left out (each bin has its t_ms).
// `extra` members (an object) are added at the top level, e.g. where the capture came from.
std::string to_json_text(const Analysis& analysis, std::size_t max_flows = SIZE_MAX,
                         const nlohmann::json& extra = nlohmann::json::object());

}  // namespace rocehil::capture
