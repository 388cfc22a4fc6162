#pragma once

#include <string>
#include <string_view>

#include "rocehil/reports/run_record.hpp"

namespace rocehil::cli {

// What `rocehil run` prints for people. Pure: a record in, text out.

// One line as a case finishes: "  allreduce/qps=8   fail   busbw 0.21 Gbit/s   3.1 s", then for
// a failure each failed threshold with what its worst repeat measured, for an error the host,
// phase and why. Over repeats the number is their median, named so (reports/repeats.hpp).
std::string case_line(const reports::CaseRecord& c);

// The verdict table at the end: one row per case (outcome, the median of its repeats, the
// thresholds that did not pass), the summary line, and where the report is.
std::string verdict_table(const reports::RunRecord& run, const std::string& run_dir);

}  // namespace rocehil::cli
