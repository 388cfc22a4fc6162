#include <fmt/format.h>
#include <fmt/ranges.h>

#include <charconv>

#include "rocehil/suites/suite.hpp"

namespace rocehil::suites {

std::string size_label(std::uint64_t bytes) {
  constexpr std::pair<std::uint64_t, char> units[] = {
      {1ull << 30, 'G'}, {1ull << 20, 'M'}, {1ull << 10, 'K'}};
  for (const auto& [unit, suffix] : units)
    if (bytes >= unit && bytes % unit == 0) return fmt::format("{}{}", bytes / unit, suffix);
  return std::to_string(bytes);
}

std::optional<std::uint64_t> parse_size(std::string_view text) {
  std::uint64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end == text.data()) return std::nullopt;
  const std::string_view unit = text.substr(static_cast<std::size_t>(end - text.data()));
  std::uint64_t scale = 0;
  if (unit.empty()) scale = 1;
  if (unit == "K" || unit == "k") scale = 1ull << 10;
  if (unit == "M" || unit == "m") scale = 1ull << 20;
  if (unit == "G" || unit == "g") scale = 1ull << 30;
  if (unit == "T" || unit == "t") scale = 1ull << 40;  // a bw volume (bytes:) up to 1T
  if (scale == 0 || value > (~std::uint64_t{0}) / scale) return std::nullopt;
  return value * scale;
}

SuiteTest test_of_part(const SuiteTest& test, const Part& part) {
  SuiteTest t;
  t.name = fmt::format("{}/{}", test.name, part.name);
  t.workload = part.workload;
  t.settings = part.settings;
  t.where = part.where;
  return t;
}

std::vector<TestCase> expand(const Suite& suite) {
  std::vector<TestCase> cases;
  for (std::size_t i = 0; i < suite.tests.size(); ++i) {
    const SuiteTest& t = suite.tests[i];
    const TestSettings& s = t.settings;
    for (const auto size : s.sizes)
      for (const auto qps : s.qps)
        for (const auto& strategy : s.strategies)
          for (const auto& placement : s.placements)
            for (const auto tclass : s.traffic_classes) {
              // The id names every swept value, so each case reads on its own in a report.
              std::string id = t.name;
              if (s.sizes.size() > 1) id += "/size=" + size_label(size);
              if (s.qps.size() > 1) id += fmt::format("/qps={}", qps);
              if (s.strategies.size() > 1) id += "/strategy=" + strategy;
              if (s.placements.size() > 1) id += "/placement=" + placement;
              if (s.traffic_classes.size() > 1) id += fmt::format("/tclass={}", tclass);
              // Classes spread over the QPs are one case; its id says which.
              if (!s.per_qp_traffic_classes.empty())
                id += fmt::format("/tclass={}", fmt::join(s.per_qp_traffic_classes, ","));
              cases.push_back({.id = std::move(id),
                               .test = i,
                               .size = size,
                               .qps = qps,
                               .strategy = strategy,
                               .placement = placement,
                               .traffic_class = tclass,
                               .per_qp_traffic_classes = s.per_qp_traffic_classes});
            }
  }
  return cases;
}

}  // namespace rocehil::suites
