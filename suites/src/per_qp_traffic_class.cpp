#include "per_qp_traffic_class.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <optional>

namespace rocehil::suites {

void read_per_qp_traffic_class(inventory::LoadContext& ctx, const YAML::Node& n,
                               const std::string& field, TestSettings& s) {
  inventory::MapReader m(ctx, n, field, {"per_qp"});
  if (!m.ok()) return;
  const YAML::Node list = m.require("per_qp", "[106, 98]");
  if (!list.IsDefined()) return;
  const std::string what = field + ": per_qp";
  if (!list.IsSequence() || list.size() == 0) {
    ctx.error(list, fmt::format("{} must be a list of one or more classes (the IP TOS byte, "
                                "0..255) such as [106, 98]; QP i gets item i % n",
                                what));
    return;
  }
  std::vector<int> classes;
  for (const auto& item : list)
    if (const auto v = inventory::read_int(ctx, item, what, 0, 255, "106"))
      classes.push_back(static_cast<int>(*v));
  if (classes.size() != list.size()) return;
  s.traffic_classes = {classes.front()};
  s.per_qp_traffic_classes = std::move(classes);
}

void check_per_qp_traffic_class(inventory::LoadContext& ctx, const inventory::MapReader& m,
                                const YAML::Node& test_node, const std::string& owner,
                                SuiteTest& t) {
  TestSettings& s = t.settings;
  if (s.per_qp_traffic_classes.empty()) return;
  const YAML::Node written = m.get("traffic_class");
  // Where to say it: the test's own key, else where defaults wrote it, else the test.
  const auto error = [&](const std::string& message) {
    if (written.IsDefined())
      ctx.error(written, message);
    else if (s.traffic_class_where.line != 0)
      ctx.error(s.traffic_class_where, message);
    else
      ctx.error(test_node, message);
  };
  if (t.workload == "iperf3") {
    if (written.IsDefined())
      error(
          fmt::format("{}: workload iperf3 has no QPs to spread traffic_class per_qp over; "
                      "give one class",
                      owner));
    s.per_qp_traffic_classes.clear();  // inherited from defaults: its first class, as a plain one
    return;
  }
  if (s.engine == "perftest" || is_calibration(t)) {
    error(
        fmt::format("{}: traffic_class per_qp needs engine rocehil: perftest takes one "
                    "--tclass per process, for all its QPs",
                    owner));
    return;
  }
  const std::size_t n = s.per_qp_traffic_classes.size();
  const std::uint32_t fewest = *std::min_element(s.qps.begin(), s.qps.end());
  if (n > fewest)
    error(
        fmt::format("{}: traffic_class per_qp gives {} classes over {} QP{} (qps {}): the "
                    "classes past the QPs would never be used; give at most {} or raise qps",
                    owner, n, fewest, fewest == 1 ? "" : "s", fewest, fewest));
}

}  // namespace rocehil::suites
