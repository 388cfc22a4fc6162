#pragma once

// The soft provider's congestion behaviour as a whole: its reaction point's DCQCN parameters and
// its notification point's CNP interval and DSCP, from the settings it was given by name.

#include <cstdint>
#include <span>

#include "rocehil/traffic/soft_settings.hpp"
#include "soft/dcqcn.hpp"

namespace rocehil::traffic::soft {

struct SoftCongestion {
  DcqcnParameters rate;
  std::uint64_t cnp_interval_ns = 0;
  std::uint8_t cnp_traffic_class = 0;  // DSCP << 2, not-ECT
  // DCQCN on or off by priority (bit P: priority P), as a ConnectX's ecn/roce_rp/enable/P and
  // ecn/roce_np/enable/P: a QP whose priority's reaction point is off ignores CNPs (its rate is
  // never cut), one whose notification point is off sends none for the CE marks it receives.
  std::uint8_t rp_priorities = 0xff;
  std::uint8_t np_priorities = 0xff;
};

// The defaults with `settings` laid over them. Throws rocehil::Error (bad input) as
// check_soft_settings() says.
SoftCongestion congestion_from(std::span<const SoftSetting> settings);

}  // namespace rocehil::traffic::soft
