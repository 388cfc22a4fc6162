#pragma once

#include <nlohmann/json.hpp>

#include "rocehil/reports/run_record.hpp"

namespace rocehil::reports {

// run.json (schema_version 1; docs/suites.md describes every member). A value that is not a
// finite number is written as null, never as a made-up number.
nlohmann::json to_json(const RunRecord& run);
nlohmann::json to_json(const CaseRecord& c);
nlohmann::json to_json(const suites::CaseGrade& grade);

}  // namespace rocehil::reports
