#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "rocehil/capture/analysis.hpp"

namespace rocehil::capture {

inline constexpr int analysis_schema_version = 1;

// The machine-readable form of an Analysis (schema_version 1), as text: one top-level member per
// line, then the flows and the timeline bins one per line. They are written straight out rather
// than through a JSON DOM because a capture can hold hundreds of thousands of flows.
// `max_flows` caps the "flows" list (the biggest first); "flow_count" always gives the total,
// so a cut is visible. Timeline bins with nothing in them are left out (each bin has its t_ms).
// `extra` members (an object) are added at the top level, e.g. where the capture came from.
// Writes the text in pieces of about 64 KiB to `sink` (stdout, a file), so a large analysis is
// never held twice in memory. With `threads` > 1, that many threads (at most 16) format the
// flows, in blocks of 4096 each at a time (so about `threads` MB are held); the text is the
// same, and `sink` is called on the calling thread only.
void write_json(const Analysis& analysis, const std::function<void(std::string_view)>& sink,
                std::size_t max_flows = SIZE_MAX,
                const nlohmann::json& extra = nlohmann::json::object(), unsigned threads = 1);
// The same text as one string.
std::string to_json_text(const Analysis& analysis, std::size_t max_flows = SIZE_MAX,
                         const nlohmann::json& extra = nlohmann::json::object());

}  // namespace rocehil::capture
