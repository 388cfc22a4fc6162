#include "cases/trust_check.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <optional>

namespace rocehil::run::case_traffic {

namespace {

struct Trust {
  std::string value;   // dscp | pcp
  std::string origin;  // where it was set or declared
};

std::optional<Trust> trust_in(const std::vector<settings::Assignment>& assignments) {
  for (const auto& a : assignments)
    if (a.setting != nullptr && a.setting->name == "trust") return Trust{a.value, a.origin};
  return std::nullopt;
}

}  // namespace

void check_trust(const suites::Suite& suite, const suites::SuiteTest& test,
                 const std::vector<const inventory::Host*>& hosts,
                 std::vector<std::string>& problems) {
  const suites::TestSettings& s = test.settings;
  // The default class (106) is rocehil's, not the suite's choice: only a written one is judged.
  if (s.traffic_class_where.line == 0 && s.per_qp_traffic_classes.empty()) return;
  const std::optional<Trust> by_test = trust_in(test.fabric_settings);
  const std::optional<Trust> by_suite = trust_in(suite.settings);
  const suites::SourceLocation at =
      s.traffic_class_where.line > 0 ? s.traffic_class_where : test.where;
  std::vector<int> dscps;
  for (const int c :
       s.per_qp_traffic_classes.empty() ? s.traffic_classes : s.per_qp_traffic_classes)
    dscps.push_back(c >> 2);
  for (const auto* host : hosts) {
    const std::optional<Trust> trust =
        by_test ? by_test : (by_suite ? by_suite : trust_in(host->settings));
    if (!trust || trust->value != "pcp") continue;
    problems.push_back(fmt::format(
        "{}:{}:{}: test '{}': traffic_class sets DSCP {}, but {} trusts PCP ({}): its switch "
        "queues by the VLAN priority (sl), not by DSCP, so the classes would not choose its "
        "queues; set sl, or trust dscp",
        suite.file, at.line, at.column, test.name, fmt::join(dscps, ","), host->name,
        trust->origin));
  }
}

}  // namespace rocehil::run::case_traffic
