#include "rocehil/traffic/qp_scaling.hpp"

#include <gtest/gtest.h>

#include <set>
#include <vector>

namespace rocehil::traffic {
namespace {

TEST(QpScaling, SplitCutsEveryMessageOverAllQps) {
  const QpScaling k8{.qps = 8, .strategy = QpStrategy::split};
  for (const std::uint64_t bytes : {1ull, 7ull, 8ull, 1000003ull}) {
    const std::uint32_t n = share_count(k8, bytes);
    EXPECT_EQ(n, std::min<std::uint64_t>(8, bytes));
    std::uint64_t next = 0;
    std::set<std::uint32_t> qps;
    for (std::uint32_t i = 0; i < n; ++i) {
      const QpShare s = share(k8, 5, bytes, i);
      EXPECT_EQ(s.offset, next);
      EXPECT_GT(s.bytes, 0u);
      next += s.bytes;
      qps.insert(s.qp);
    }
    EXPECT_EQ(next, bytes);
    EXPECT_EQ(qps.size(), n);
  }
  EXPECT_EQ(share_count(k8, 0), 0u);
}

TEST(QpScaling, RoundRobinRotatesWholeMessages) {
  const QpScaling k4{.qps = 4, .strategy = QpStrategy::round_robin};
  std::vector<std::uint64_t> per_qp(4, 0);
  for (std::uint64_t m = 0; m < 40; ++m) {
    ASSERT_EQ(share_count(k4, 1000), 1u);
    const QpShare s = share(k4, m, 1000, 0);
    EXPECT_EQ(s.qp, m % 4);
    EXPECT_EQ(s.offset, 0u);
    EXPECT_EQ(s.bytes, 1000u);
    per_qp[s.qp] += s.bytes;
  }
  EXPECT_EQ(per_qp, std::vector<std::uint64_t>(4, 10000));
}

TEST(QpScaling, SourcePortsAreRepeatableDistinctAndInTheRoceRange) {
  const auto a = udp_source_ports(42, 3, 64);
  EXPECT_EQ(a, udp_source_ports(42, 3, 64));
  EXPECT_NE(a, udp_source_ports(43, 3, 64));
  EXPECT_NE(a, udp_source_ports(42, 4, 64));
  EXPECT_EQ(std::set<std::uint16_t>(a.begin(), a.end()).size(), a.size());
  for (const auto p : a) EXPECT_GE(p, 49152);
  // Even more QPs than the range holds do not loop forever.
  EXPECT_EQ(udp_source_ports(1, 0, 20000).size(), 20000u);
}

TEST(QpScaling, PinnedPortsAreUsedInOrder) {
  const std::vector<std::uint16_t> pinned{50000, 50001, 50002};
  EXPECT_EQ(udp_source_ports(9, 1, 5, pinned),
            (std::vector<std::uint16_t>{50000, 50001, 50002, 50000, 50001}));
}

TEST(QpScaling, StrategyNames) {
  EXPECT_EQ(qp_strategy_from_name("split"), QpStrategy::split);
  EXPECT_EQ(qp_strategy_from_name(to_string(QpStrategy::round_robin)), QpStrategy::round_robin);
  EXPECT_FALSE(qp_strategy_from_name("spray").has_value());
}

}  // namespace
}  // namespace rocehil::traffic
