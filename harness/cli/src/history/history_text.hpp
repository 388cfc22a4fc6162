#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "rocehil/reports/history.hpp"

namespace rocehil::cli {

// `rocehil history`'s table: a row per run with its kind (full, or what makes it partial: `only
// GLOB`, `set KEY=VALUE`, `bisect`, ...), how it ended and its headline numbers; then how many
// runs and from where.
std::string render_history(const std::vector<reports::History::RunRow>& rows,
                           const std::string& db);

// The same as JSON (schema_version 1): per run its kind, `only` (null or the glob) and `set`
// (the KEY=VALUE it was given) beside the counts and headline.
nlohmann::ordered_json history_json(const std::vector<reports::History::RunRow>& rows,
                                    const std::string& db);

// The kind column's cell: the kind and what made it so, short.
std::string kind_cell(const reports::RunKindInfo& kind);

}  // namespace rocehil::cli
