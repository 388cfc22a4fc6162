#pragma once

// How many QPs per connection a test may ask for: bw up to 16384 (the SONiC RoCEv2 plan scales
// to 4K+ endpoints per port), a collective up to 256 (its immediate tells a step's share apart in
// 8 bits). Whether a host's device holds them all is preflight's question (max_qp).

#include <cstdint>
#include <string>

#include "rocehil/inventory/yaml_reader.hpp"
#include "rocehil/suites/suite.hpp"

namespace rocehil::suites::detail {

inline constexpr std::uint32_t max_qps_per_connection = 16384;
inline constexpr std::uint32_t max_collective_qps = 256;

// Refuses, at `qps:`, a collective's value above max_collective_qps.
void check_qps(inventory::LoadContext& ctx, const inventory::MapReader& m, const YAML::Node& n,
               const std::string& owner, const SuiteTest& t);

}  // namespace rocehil::suites::detail
