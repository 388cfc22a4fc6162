#include "qp_limits.hpp"

#include <fmt/format.h>

namespace rocehil::suites::detail {

void check_qps(inventory::LoadContext& ctx, const inventory::MapReader& m, const YAML::Node& n,
               const std::string& owner, const SuiteTest& t) {
  if (is_point_to_point(t) || t.workload == parts_workload) return;
  for (const std::uint32_t qps : t.settings.qps)
    if (qps > max_collective_qps) {
      ctx.error(m.get("qps").IsDefined() ? m.get("qps") : n,
                fmt::format("{}: a collective takes at most {} QPs per connection (its RDMA "
                            "WRITE immediate tells a step's share apart in 8 bits), got {}; "
                            "workload bw takes up to {}",
                            owner, max_collective_qps, qps, max_qps_per_connection));
      return;
    }
}

}  // namespace rocehil::suites::detail
