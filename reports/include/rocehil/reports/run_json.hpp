#pragma once

#include <nlohmann/json.hpp>

#include "rocehil/reports/run_record.hpp"

namespace rocehil::reports {

// run.json (schema_version 1; docs/suites.md describes every member). A value that is not a
// finite number is written as null, never as a made-up number.
nlohmann::json to_json(const RunRecord& run);
nlohmann::json to_json(const CaseRecord& c);
nlohmann::json to_json(const suites::CaseGrade& grade);

// A case read back from its run.json entry: what its repeats are summarised from (id, test,
// workload, expect_fail, skip_reason, each attempt's repeat, seconds, error, metrics and
// grade). Never throws: a member missing or of another type (an older or edited run.json)
// reads as absent. Not read back: raw, unmeasured, where, kept captures, the outcome.
CaseRecord case_record(const nlohmann::json& c);

}  // namespace rocehil::reports
