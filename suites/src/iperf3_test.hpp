#pragma once

// workload iperf3 in a suite file: its own keys (protocol, streams) and what it refuses (every
// RDMA key, qps above all; UDP without a rate). Called by load_suite.cpp's test reader.

#include <string>

#include "rocehil/inventory/yaml_reader.hpp"
#include "rocehil/suites/suite.hpp"

namespace rocehil::suites {

// The keys only an iperf3 test takes, for the test reader's list of known keys.
#define ROCEHIL_IPERF3_KEYS "protocol", "streams"

// Reads an iperf3 test's own keys into t.settings.iperf3 and refuses, at the key, each key the
// test writes that iperf3 does not use (with why) and UDP without a rate; the RDMA settings it
// inherits from `defaults:` (meant for the suite's other tests) are put back to their defaults,
// so they neither sweep its cases nor trip the RDMA checks. On any other workload, refuses
// protocol and streams.
void check_iperf3_test(inventory::LoadContext& ctx, const inventory::MapReader& m,
                       const YAML::Node& test_node, const std::string& owner, SuiteTest& t);

}  // namespace rocehil::suites
