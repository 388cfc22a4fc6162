#include "pacing_setup.hpp"

#include <fmt/format.h>

#include <string>

namespace rocehil::agent {

std::optional<PacingReport> pace_sender(const SetupRequest& setup,
                                        std::vector<std::unique_ptr<traffic::QueuePair>>& qps) {
  const bool sends = setup.role == Role::client || setup.bidirectional;
  if (setup.rate_bps <= 0 || setup.workload != Workload::bw || !sends || qps.empty())
    return std::nullopt;
  PacingReport report;
  report.asked_bps = setup.rate_bps;
  const double per_qp = setup.rate_bps / static_cast<double>(qps.size());
  for (std::size_t i = 0; i < qps.size(); ++i) {
    std::string why = qps[i]->limit_rate(per_qp);
    if (why.empty()) continue;
    // All QPs or none: a sender half paced by the NIC and half by the engine would hold
    // neither rate.
    for (std::size_t k = 0; k < i; ++k) (void)qps[k]->limit_rate(0);
    report.nic_refused = std::move(why);
    return report;
  }
  report.method = "nic";
  report.per_qp_bps = per_qp;
  return report;
}

double engine_rate_bps(const std::optional<PacingReport>& pacing) {
  return pacing && pacing->method == "engine" ? pacing->asked_bps : 0;
}

}  // namespace rocehil::agent
