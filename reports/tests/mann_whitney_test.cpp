#include "rocehil/reports/mann_whitney.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace rocehil::reports {
namespace {

// Counts by hand: with complete separation only 1 of C(n1+n2, n1) arrangements is as extreme in
// each tail. The comparison with SciPy over random samples is mann_whitney_scipy (system).

TEST(MannWhitney, CompleteSeparationIsTheRarestArrangement) {
  const std::vector<double> a{10, 11, 12, 13, 14}, b{1, 2, 3, 4, 5};
  const MannWhitney r = mann_whitney_u(a, b);
  EXPECT_TRUE(r.exact);
  EXPECT_EQ(r.u, 25);  // every pair has a > b
  EXPECT_NEAR(r.p_value, 2.0 / 252, 1e-12);
  EXPECT_EQ(mann_whitney_u(b, a).u, 0);
  EXPECT_NEAR(mann_whitney_u(b, a).p_value, 2.0 / 252, 1e-12);
  EXPECT_NEAR(smallest_p_value(5, 5), 2.0 / 252, 1e-12);
}

TEST(MannWhitney, ThreeRepeatsEachCannotReachFivePercent) {
  const std::vector<double> a{100, 101, 102}, b{1, 2, 3};
  EXPECT_NEAR(mann_whitney_u(a, b).p_value, 0.1, 1e-12);
  EXPECT_NEAR(smallest_p_value(3, 3), 0.1, 1e-12);
  EXPECT_NEAR(smallest_p_value(4, 4), 2.0 / 70, 1e-12);
}

TEST(MannWhitney, ExactTailCountedByHandForTwoAgainstTwo) {
  // Sizes 2 and 2: U takes 0,1,2,2,3,4 over the 6 arrangements. U = 3: P(U >= 3) = 2/6.
  const std::vector<double> a{2, 4}, b{1, 3};
  const MannWhitney r = mann_whitney_u(a, b);
  EXPECT_EQ(r.u, 3);
  EXPECT_NEAR(r.p_value, 2 * 2.0 / 6, 1e-12);
  // Interleaved evenly: U = 2, the middle; the doubled tail is capped at 1.
  EXPECT_NEAR(mann_whitney_u(std::vector<double>{1, 4}, std::vector<double>{2, 3}).p_value, 1.0,
              1e-12);
}

TEST(MannWhitney, TiesUseTheNormalApproximationWithMeanRanks) {
  const std::vector<double> a{1, 2, 2, 3}, b{2, 3, 3, 4};
  const MannWhitney r = mann_whitney_u(a, b);
  EXPECT_FALSE(r.exact);
  // Ranks of the pooled values: 1 -> 1, 2 -> 3 (three of them), 3 -> 6 (three), 4 -> 8.
  // R1 = 1 + 3 + 3 + 6 = 13, U = 13 - 10 = 3.
  EXPECT_EQ(r.u, 3);
  EXPECT_GT(r.p_value, 0.05);
  EXPECT_LT(r.p_value, 1.0);
}

TEST(MannWhitney, EveryValueEqualIsNoDifference) {
  const std::vector<double> a{5, 5, 5}, b{5, 5, 5, 5};
  const MannWhitney r = mann_whitney_u(a, b);
  EXPECT_EQ(r.u, 6);
  EXPECT_EQ(r.p_value, 1.0);
}

TEST(MannWhitney, LargeSamplesUseTheNormalApproximation) {
  std::vector<double> a, b;
  for (int i = 0; i < 20; ++i) {
    a.push_back(100 + i);
    b.push_back(80 + i);
  }
  const MannWhitney r = mann_whitney_u(a, b);
  EXPECT_FALSE(r.exact);
  EXPECT_LT(r.p_value, 0.001);
  EXPECT_GT(r.p_value, 0);
}

}  // namespace
}  // namespace rocehil::reports
