#include "rocehil/traffic/rank_order.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace rocehil::traffic {
namespace {

// 2 racks x 2 hosts x 2 rails, listed rack 1 first to show that order follows the racks.
std::vector<RankSlot> slots() {
  std::vector<RankSlot> s;
  for (const int host : {2, 3, 0, 1})
    for (int rail = 0; rail < 2; ++rail) s.push_back({host, host / 2, rail});
  return s;
}

std::vector<int> hosts_in_order(Placement p) {
  const auto s = slots();
  std::vector<int> hosts;
  for (const int i : order_ranks(s, p)) hosts.push_back(s[static_cast<std::size_t>(i)].host);
  return hosts;
}

TEST(RankOrder, PackedKeepsRacksTogether) {
  EXPECT_EQ(hosts_in_order(Placement::packed), (std::vector<int>{0, 0, 1, 1, 2, 2, 3, 3}));
}

TEST(RankOrder, FragmentedAlternatesRacksAndKeepsAHostsRailsTogether) {
  EXPECT_EQ(hosts_in_order(Placement::fragmented), (std::vector<int>{0, 0, 2, 2, 1, 1, 3, 3}));
  const auto s = slots();
  const auto order = order_ranks(s, Placement::fragmented);
  for (std::size_t i = 0; i < order.size(); i += 2) {
    EXPECT_EQ(s[static_cast<std::size_t>(order[i])].rail, 0);
    EXPECT_EQ(s[static_cast<std::size_t>(order[i + 1])].rail, 1);
  }
}

TEST(RankOrder, Names) {
  EXPECT_EQ(placement_from_name("fragmented"), Placement::fragmented);
  EXPECT_FALSE(placement_from_name("scattered").has_value());
}

}  // namespace
}  // namespace rocehil::traffic
