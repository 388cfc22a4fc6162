#include "verbs/rate_limit.hpp"

#include <fmt/format.h>

#include <cmath>
#include <limits>

namespace rocehil::traffic::verbs {

RateLimitPlan rate_limit_plan(double bits_per_s, std::uint32_t mtu, const PacingCaps& caps) {
  RateLimitPlan plan;
  if (caps.max_kbps == 0) {
    plan.refused = "the device has no packet pacing (ibv_query_device_ex: qp_rate_limit_max 0)";
    return plan;
  }
  const double kbps = std::round(bits_per_s / 1e3);
  if (!(kbps >= 1) || kbps > std::numeric_limits<std::uint32_t>::max()) {
    plan.refused = fmt::format("{:g} bit/s is not a rate the NIC takes in kbps", bits_per_s);
    return plan;
  }
  const auto rate = static_cast<std::uint32_t>(kbps);
  if (rate < caps.min_kbps || rate > caps.max_kbps) {
    plan.refused = fmt::format("{} kbps per QP is outside the device's pacing range {}..{} kbps",
                               rate, caps.min_kbps, caps.max_kbps);
    return plan;
  }
  plan.attr.rate_limit = rate;
  plan.attr.comp_mask = 0;
  if (caps.burst_control && mtu > 0 && mtu <= std::numeric_limits<std::uint16_t>::max())
    plan.attr.typical_pkt_sz = static_cast<std::uint16_t>(mtu);
  return plan;
}

}  // namespace rocehil::traffic::verbs
