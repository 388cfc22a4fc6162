#pragma once

#include <string>
#include <string_view>

#include "rocehil/reports/run_record.hpp"

namespace rocehil::cli {

// What `rocehil run` prints for people. Pure: a record in, text out.

// One line as a case finishes: "  allreduce/qps=8   fail   busbw 0.21 Gbit/s   3.1 s", then for
// a failure each failed threshold with what was measured, for an error the host, phase and why.
std::string case_line(const reports::CaseRecord& c);

// The verdict table at the end: one row per case (outcome, attempts, the thresholds that did not
// pass), the summary line, and where the report is.
std::string verdict_table(const reports::RunRecord& run, const std::string& run_dir);

// "busbw 0.52 Gbit/s" (a collective), "bw 0.52 Gbit/s" (point to point: the payload rate, not a
// bus bandwidth), "lat p99 14.2 us", or empty: the number a person looks at first.
std::string headline(const suites::Values& metrics, std::string_view workload);

}  // namespace rocehil::cli
