#include "rocehil/run/fairness.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace rocehil::run {
namespace {

// Jain's index by its definition, worked by hand: rates 1 and 3 give 16 / (2 x 10) = 0.8.
TEST(Fairness, JainsIndexAndTheLargestDeviationByHand) {
  const std::vector<double> even{5, 5, 5, 5}, one_of_four{8, 0, 0, 0}, two{1, 3};
  EXPECT_DOUBLE_EQ(jain_index(even), 1.0);
  EXPECT_DOUBLE_EQ(jain_index(one_of_four), 0.25);  // 1/n: one flow took everything
  EXPECT_DOUBLE_EQ(jain_index(two), 0.8);
  EXPECT_DOUBLE_EQ(largest_deviation(even), 0.0);
  EXPECT_DOUBLE_EQ(largest_deviation(two), 0.5);          // mean 2, each 1 away
  EXPECT_DOUBLE_EQ(largest_deviation(one_of_four), 3.0);  // mean 2, 8 is 6 away
  // The plan's bar: two ranks within 30% of their mean.
  EXPECT_LT(largest_deviation(std::vector<double>{1.0, 1.5}), 0.3);
  EXPECT_GT(largest_deviation(std::vector<double>{1.0, 2.0}), 0.3);
}

TEST(Fairness, FewerThanTwoFlowsOrNothingMovedIsAbsentWithTheReason) {
  suites::Measured m;
  add_fairness(m, std::vector<double>{3.0, 1.0}, "QPs");
  EXPECT_DOUBLE_EQ(m.values.at("fairness_jain"), 0.8);
  EXPECT_DOUBLE_EQ(m.values.at("rate_deviation"), 0.5);
  suites::Measured one;
  add_fairness(one, std::vector<double>{3.0}, "QPs");
  EXPECT_EQ(one.values.count("fairness_jain"), 0u);
  EXPECT_EQ(one.unmeasured.at("fairness_jain"),
            "it compares the rates of two or more QPs; this case has 1");
  suites::Measured idle;
  add_fairness(idle, std::vector<double>{0, 0}, "sending ranks");
  EXPECT_EQ(idle.unmeasured.at("rate_deviation"),
            "none of the sending ranks moved a byte: no share to compare");
  suites::Measured told;
  add_fairness(told, std::vector<double>{1, 2}, "QPs", "the sender reported no per-QP rates");
  EXPECT_EQ(told.values.count("rate_deviation"), 0u);
  EXPECT_EQ(told.unmeasured.at("fairness_jain"), "the sender reported no per-QP rates");
}

}  // namespace
}  // namespace rocehil::run
