#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace rocehil::reports {

// report.html's switch table for one attempt, from run.json's raw.switches: the ports of the
// case's switches that dropped, errored or sent or received PFC frames during the case (with
// their octets beside them), each switch that did not answer with its reason, and the
// switch-against-NIC and switch-against-mirror reconciliations. Nothing when the attempt has no
// switch readings.
std::string switch_ports_table(const nlohmann::json& attempt);

}  // namespace rocehil::reports
