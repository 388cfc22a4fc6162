#pragma once

// How many QPs per connection a test may ask for: up to 16384, bw or a collective (the SONiC
// RoCEv2 plan scales to 4K+ endpoints per port). What else bounds them needs the ranks, which a
// suite does not know (they are the selected hosts' NICs): a collective rank's QPs are its peers
// x qps, and the controller refuses a case whose busiest rank has more than an agent takes, before
// it launches one. Whether a host's device holds them all is preflight's question (max_qp).

#include <cstdint>

#include "rocehil/traffic/qp_scaling.hpp"

namespace rocehil::suites::detail {

inline constexpr std::uint32_t max_qps_per_connection = traffic::max_qps_per_connection;

}  // namespace rocehil::suites::detail
