#pragma once

#include <span>
#include <string>
#include <string_view>

#include "rocehil/suites/threshold.hpp"

namespace rocehil::run {

// How evenly flows shared the fabric (the plan's "Tx rate of rank0 and rank1 should be fair"):
//   fairness_jain  = (sum x)^2 / (n * sum x^2), Jain's index: 1 when every rate is equal, 1/n
//                    when one flow took everything;
//   rate_deviation = max |x - mean| / mean: the largest deviation from the mean, as a fraction.
// Both need two flows or more; a mean of 0 (nothing moved) has no deviation either.
double jain_index(std::span<const double> rates);
double largest_deviation(std::span<const double> rates);

// Sets both metrics from `rates` (one per flow: QPs of a sender, or senders), or makes them
// absent with `why_not` when there is no rate to compare, and with a reason of its own when fewer
// than two flows moved or none did. `flows` names them in the reasons ("QPs", "senders").
void add_fairness(suites::Measured& m, std::span<const double> rates, std::string_view flows,
                  const std::string& why_not = {});

}  // namespace rocehil::run
