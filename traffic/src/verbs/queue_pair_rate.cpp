// The NIC's rate limiter on a connected QP (verbs/rate_limit.hpp for the attributes' sources).
#include <fmt/format.h>

#include <cstring>

#include "verbs/queue_pair.hpp"
#include "verbs/rate_limit.hpp"

namespace rocehil::traffic::verbs {

std::string VerbsQueuePair::limit_rate(double bits_per_s) {
  if (!ready_to_send_ || options_.type != QpType::rc)
    return fmt::format("QP {:#x} on {} is not a connected RC QP", qpn(), device_->name);
  if (bits_per_s == 0) {  // lifts the limit: rate_limit 0 is "unlimited" to every device
    ibv_qp_rate_limit_attr none{};
    const int error = ibv_modify_qp_rate_limit(qp_.get(), &none);
    return error == 0 ? std::string{}
                      : fmt::format("ibv_modify_qp_rate_limit(0) of QP {:#x} on {}: {}", qpn(),
                                    device_->name, std::strerror(error));
  }
  ibv_device_attr_ex attr{};
  if (const int error = ibv_query_device_ex(device_->context.get(), nullptr, &attr); error != 0)
    return fmt::format("ibv_query_device_ex({}) failed: {}", device_->name, std::strerror(error));
  // Burst control needs mlx5dv's MLX5_IB_PP_SUPPORT_BURST, which this build does not read: the
  // device's defaults (a burst, the port's MTU as the typical packet) are what perftest's PP
  // limiter gets too.
  const PacingCaps caps{.min_kbps = attr.packet_pacing_caps.qp_rate_limit_min,
                        .max_kbps = attr.packet_pacing_caps.qp_rate_limit_max,
                        .burst_control = false};
  RateLimitPlan plan = rate_limit_plan(bits_per_s, options_.mtu, caps);
  if (!plan.refused.empty()) return fmt::format("{}: {}", device_->name, plan.refused);
  // The QP is in RTS: the kernel applies the limit as an RTS -> RTS modify.
  if (const int error = ibv_modify_qp_rate_limit(qp_.get(), &plan.attr); error != 0)
    return fmt::format("ibv_modify_qp_rate_limit({} kbps) of QP {:#x} on {}: {}",
                       plan.attr.rate_limit, qpn(), device_->name, std::strerror(error));
  return {};
}

}  // namespace rocehil::traffic::verbs
