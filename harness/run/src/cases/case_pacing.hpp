#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "rocehil/agent/protocol.hpp"
#include "rocehil/inventory/inventory.hpp"
#include "rocehil/suites/suite.hpp"

// A test's `rate:` (docs/suites.md, "Pacing") between the suite and the agents: checked against
// the senders' NICs before anything runs, resolved to bits per second for each sender (agents
// never see a percentage), and reported in run.json with what each sender reached.
namespace rocehil::run::case_traffic {

// What `nic`'s host sends in all, in payload bits per second; 0 when the test is unpaced. A
// percentage is of the NIC's link_gbps (check_rate refuses one the inventory does not give).
double sender_rate_bps(const suites::TestSettings& settings, const inventory::Nic& nic);

// The test's rate against its senders (a point-to-point bw test's client): a percentage of a
// NIC whose link speed the inventory does not give, or an absolute rate above a sender's link,
// as "FILE:LINE:COL: test 'x': rate ..." at the rate's position.
void check_rate(const std::string& suite_file, const suites::SuiteTest& test,
                const std::vector<const inventory::Host*>& senders,
                std::vector<std::string>& problems);

// run.json's traffic.pacing of a paced case: the rate as written and, per sender, what it asked,
// how it was held, and what it reached (bytes over its measured interval; absent when nothing
// was measured). Null for an unpaced test.
nlohmann::json pacing_json(const suites::TestSettings& settings, const std::string& host,
                           const inventory::Nic& nic, const agent::ResultsEvent& results);
nlohmann::json perftest_pacing_json(const suites::TestSettings& settings, const std::string& host,
                                    const inventory::Nic& nic,
                                    const agent::PerftestResultsEvent* results);

}  // namespace rocehil::run::case_traffic
