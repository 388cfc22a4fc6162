#pragma once

#include <string>
#include <vector>

#include "rocehil/run/collective_run.hpp"

namespace rocehil::cli {

// What 'rocehil traffic collective' prints: a table like nccl-tests' (one row per size and QP
// count) and notes under it (data problems, stragglers, the pairwise matrix); its JSON is
// run::collective_json.

std::string collective_table_header(const run::CollectiveJob& job,
                                    const std::vector<run::CollectiveRankInfo>& ranks,
                                    const std::string& provider, const std::string& placement);
std::string collective_table_row(const run::CollectiveCase& c);
std::string collective_notes(const run::CollectiveCase& c);

// 0: every case ran without transport errors and every checked output was right; 1 otherwise.
int collective_exit_code(const std::vector<run::CollectiveCase>& cases);

}  // namespace rocehil::cli
