#pragma once

#include <string>

#include "rocehil/run/perftest_pair.hpp"

namespace rocehil::cli {

// What 'rocehil traffic client --engine perftest' prints for people: the commands each side ran,
// perftest's version and where its numbers were read from, its numbers, or why it failed.
std::string format_perftest_pair(const run::PerftestPairResult& result);

// One side's numbers on one line: "BW average 92.29 Gb/s, peak 92.31, MsgRate 0.176 Mpps" or
// "t_typical 1.10 us, 99% 1.30, 99.9% 2.10, t_max 5.00"; empty without a report.
std::string perftest_numbers(const perftest::Report& report);

}  // namespace rocehil::cli
