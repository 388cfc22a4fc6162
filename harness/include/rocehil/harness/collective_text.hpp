#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "rocehil/harness/collective_run.hpp"

namespace rocehil::harness {

// What 'rocehil traffic collective' prints: a table like nccl-tests' (one row per size and QP
// count), notes under it (data problems, stragglers, the pairwise matrix), and JSON.

struct CollectiveRankInfo {
  std::string host;
  std::string nic;  // netdev, or RDMA device
  std::string address;
};

std::string collective_table_header(const CollectiveJob& job,
                                    const std::vector<CollectiveRankInfo>& ranks,
                                    const std::string& provider, const std::string& placement);
std::string collective_table_row(const CollectiveCase& c);
std::string collective_notes(const CollectiveCase& c);

// schema_version 1: the job, the ranks, and every case with its summary, per-rank and per-QP
// numbers (peer, UDP source port, bytes, counters), and the data check.
nlohmann::json collective_json(const std::vector<CollectiveRankInfo>& ranks,
                               const std::string& provider, const std::string& placement,
                               const std::vector<CollectiveCase>& cases);

// 0: every case ran without transport errors and every checked output was right; 1 otherwise.
int collective_exit_code(const std::vector<CollectiveCase>& cases);

}  // namespace rocehil::harness
