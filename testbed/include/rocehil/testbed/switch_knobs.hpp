#pragma once

// The lossless switches' knobs (SwitchKnobs, options.hpp) as the state file and each switch's
// forwarding process keep them, and their ranges.

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "rocehil/testbed/options.hpp"

namespace rocehil::testbed {

nlohmann::json knobs_to_json(const SwitchKnobs& knobs);
// Throws rocehil::Error (bad input) naming `path`, the field and the fix.
SwitchKnobs knobs_from_json(const nlohmann::json& j, const std::string& path);

// How the settings catalogue writes an empty list of priorities, and no DSCP pairs over SONiC's
// map: a value a journal can hold ("" there means "nothing was read").
inline constexpr std::string_view no_priorities = "none";
inline constexpr std::string_view no_dscp_pairs = "default";

// "3:3,4:4,46:5": (DSCP, class) pairs, DSCP 0-63, class 0-7, each DSCP once; empty text or
// "default", none. Throws rocehil::Error (bad input) naming `field` and the form.
std::vector<std::pair<int, int>> parse_dscp_pairs(std::string_view text, std::string_view field);
// The pairs sorted by DSCP, "3:3,46:5"; "default" for none.
std::string format_dscp_pairs(std::vector<std::pair<int, int>> pairs);
// "3,4": priorities 0-7, each once; empty text or "none", none (a lossy fabric). Throws as above.
std::vector<int> parse_priority_list(std::string_view text, std::string_view field);
// "3,4" ascending; "none" for none.
std::string format_priority_list(const std::vector<int>& priorities);

// The knobs' setting names, as `rocehil settings list` and `testbed set` name them.
std::vector<std::string_view> knob_names();
bool is_knob(std::string_view name);
// `knobs` with setting `name` (one of knob_names()) set from `text` ("0"/"1", "3,4", "125",
// "3:3,46:5"), checked; throws rocehil::Error (bad input) naming the setting and the fix.
SwitchKnobs with_knob(SwitchKnobs knobs, std::string_view name, std::string_view text);
// Every (name, text) set in turn, then checked together, so that one command can move WRED's
// kmin above the old kmax along with kmax. Throws as with_knob.
SwitchKnobs with_knobs(SwitchKnobs knobs,
                       const std::vector<std::pair<std::string, std::string>>& assignments);
// The knob's value as the settings catalogue writes it (canonical_value): "1", "3,4" or "none",
// "125", "3:3,46:5" or "default". with_knob takes it back.
std::string knob_text(const SwitchKnobs& knobs, std::string_view name);

// Throws rocehil::Error (bad input) naming the setting (switch.wred_kmin_kb, ...) and its range
// for the first knob out of it, or kmin above kmax.
void validate_knobs(const SwitchKnobs& knobs);

}  // namespace rocehil::testbed
