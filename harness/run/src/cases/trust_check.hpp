#pragma once

// A test that marks its packets with DSCP classes (traffic_class written, or per_qp) on a host
// whose NIC trusts PCP: its switch queues by the VLAN priority (sl), so the classes would
// silently land every QP in one queue. Checked when validate holds a suite against an inventory.

#include <string>
#include <vector>

#include "rocehil/inventory/inventory.hpp"
#include "rocehil/suites/suite.hpp"

namespace rocehil::run::case_traffic {

// Appends one problem per such host, at the test's `traffic_class:`. A host's trust is what the
// test's `settings:` set, else the suite's, else what the inventory declares for it; a host
// with none of them is not judged (its NIC's trust is not known here).
void check_trust(const suites::Suite& suite, const suites::SuiteTest& test,
                 const std::vector<const inventory::Host*>& hosts,
                 std::vector<std::string>& problems);

}  // namespace rocehil::run::case_traffic
