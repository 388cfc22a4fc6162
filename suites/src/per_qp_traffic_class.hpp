#pragma once

// `traffic_class: {per_qp: [106, 98, ...]}` in a suite file: several classes spread over a
// connection's QPs in one case (QP i gets item i % n), as the SONiC RoCEv2 test plan puts the
// QPs of one pair on several DSCPs. A plain list stays a sweep. Called by load_suite.cpp.

#include <string>

#include "rocehil/inventory/yaml_reader.hpp"
#include "rocehil/suites/suite.hpp"

namespace rocehil::suites {

// Reads the map form at `n` (a YAML map) into s.per_qp_traffic_classes, with s.traffic_classes
// set to its first item (what everything that reads one class uses). Refuses, at the node, a
// map without per_qp, an empty list and items outside 0..255.
void read_per_qp_traffic_class(inventory::LoadContext& ctx, const YAML::Node& n,
                               const std::string& field, TestSettings& s);

// What a test's (or a part's) workload cannot do with per-QP classes: more classes than QPs,
// engine perftest (one --tclass per process), iperf3 (no QPs). An iperf3 test that inherits
// the form from `defaults:` keeps its first class.
void check_per_qp_traffic_class(inventory::LoadContext& ctx, const inventory::MapReader& m,
                                const YAML::Node& test_node, const std::string& owner,
                                SuiteTest& t);

}  // namespace rocehil::suites
