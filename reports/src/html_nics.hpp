#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace rocehil::reports {

// report.html's NIC counter table for one attempt, from run.json's raw.nics: per host and NIC
// the counters that changed during the case (non-zero deltas only), then any counter that went
// backwards, any source that could not be read, and both sides of the capture-against-counters
// reconciliations (raw.reconciliation). Nothing when the attempt has no NIC readings.
std::string nic_counters_table(const nlohmann::json& attempt);

}  // namespace rocehil::reports
