#include "rocehil/traffic/collective_summary.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "rocehil/common/error.hpp"

namespace rocehil::traffic {
namespace {

TEST(CollectiveSummary, TimesAreTheLastRanksAndBandwidthIsNcclTests) {
  const auto plan = make_plan({.pattern = Pattern::ring_allreduce, .ranks = 4, .bytes = 8000000});
  // Iteration ends (us after 0): the latest rank decides each one.
  std::vector<RankTiming> ranks(4);
  const std::int64_t us = 1000;
  for (int r = 0; r < 4; ++r) {
    ranks[r].start_ns = r * 10 * us;  // the last rank began at 30 us
    ranks[r].iteration_end_ns = {100 * us + r * us, 200 * us, 400 * us - r * us};
    ranks[r].wait_ns = {static_cast<std::uint64_t>(r == 2 ? 1 : 100) * us};
  }
  const CollectiveSummary s = summarize_collective(*plan, ranks);
  EXPECT_EQ(s.iterations, 3u);
  // Iterations: 30 -> 103, 103 -> 200, 200 -> 400: 73, 97, 200 us.
  EXPECT_DOUBLE_EQ(s.time_us, (73.0 + 97 + 200) / 3);
  EXPECT_DOUBLE_EQ(s.time_p50_us, 97);
  EXPECT_DOUBLE_EQ(s.time_p99_us, 200);
  EXPECT_DOUBLE_EQ(s.time_max_us, 200);
  EXPECT_EQ(s.iteration_us, (std::vector<double>{73, 97, 200}));
  const double mean = (73.0 + 97 + 200) / 3;
  const double sd = std::sqrt(
      ((73 - mean) * (73 - mean) + (97 - mean) * (97 - mean) + (200 - mean) * (200 - mean)) / 3);
  EXPECT_NEAR(s.time_cv, sd / mean, 1e-12);
  // nccl-tests: algbw = size / 1e9 / seconds; busbw = algbw * 2(n-1)/n.
  const double algbw = 8000000 / 1e9 / (mean / 1e6);
  EXPECT_NEAR(s.algbw_gbytes_s, algbw, 1e-9);
  EXPECT_NEAR(s.busbw_gbytes_s, algbw * 1.5, 1e-9);
  EXPECT_NEAR(s.busbw_gbps, algbw * 1.5 * 8, 1e-9);
  EXPECT_EQ(s.straggler, 2);
  EXPECT_DOUBLE_EQ(s.wait_ms[2], 0.001);
}

TEST(CollectiveSummary, NoStragglerWhenWaitsAreEven) {
  const auto plan = make_plan({.pattern = Pattern::ring_allgather, .ranks = 3, .bytes = 3000});
  std::vector<RankTiming> ranks(3);
  for (auto& r : ranks) {
    r.iteration_end_ns = {1000};
    r.wait_ns = {400, 300};
  }
  EXPECT_EQ(summarize_collective(*plan, ranks).straggler, -1);
  ranks.pop_back();
  EXPECT_THROW(summarize_collective(*plan, ranks), Error);
}

TEST(PairwiseMatrix, NamesTheSlowPairsAndTheRankTheyShare) {
  const int n = 6;
  const std::uint64_t bytes = 1000000;
  const auto plan = make_plan({.pattern = Pattern::pairwise, .ranks = n, .bytes = bytes});
  std::vector<RankTiming> ranks(n);
  Step s;
  for (int r = 0; r < n; ++r) {
    ranks[r].step_ns.assign(static_cast<std::size_t>(plan->steps(r)), 0);
    for (int i = 1; i < plan->steps(r); i += 2) {
      plan->step(r, i, s);
      const int p = s.sends[0].peer;
      // 8 Gbit/s: 1 ms per MB over 2 iterations; pairs with rank 4 take 4 times as long.
      ranks[r].step_ns[i] = (r == 4 || p == 4 ? 4 : 1) * 2'000'000;
    }
  }
  const PairwiseMatrix m = pairwise_matrix(*plan, ranks, 2, 0.2);
  EXPECT_DOUBLE_EQ(m.at(0, 1), 8.0);
  EXPECT_DOUBLE_EQ(m.at(4, 0), 2.0);
  EXPECT_TRUE(std::isnan(m.at(0, 0)));  // no pair
  EXPECT_DOUBLE_EQ(m.median_gbps, 8.0);
  ASSERT_EQ(m.outliers.size(), 5u);
  for (const auto& o : m.outliers) EXPECT_TRUE(o.a == 4 || o.b == 4);
  EXPECT_EQ(m.suspects, std::vector<int>{4});
  EXPECT_THROW(
      pairwise_matrix(*make_plan({.pattern = Pattern::alltoall, .ranks = n}), ranks, 2, 0.2),
      Error);
}

TEST(PairwiseMatrix, AnUntimedStepIsUnknownNotAZeroGbitPair) {
  const auto plan = make_plan({.pattern = Pattern::pairwise, .ranks = 4, .bytes = 1000000});
  std::vector<RankTiming> ranks(4);
  for (auto& r : ranks) r.step_ns.assign(static_cast<std::size_t>(plan->steps(0)), 1'000'000);
  // Rank 3 timed nothing of its first round (with rank 0); rank 0 did.
  ranks[3].step_ns[1] = 0;
  const PairwiseMatrix m = pairwise_matrix(*plan, ranks, 1, 0.2);
  EXPECT_TRUE(std::isnan(m.at(3, 0)));
  EXPECT_DOUBLE_EQ(m.at(0, 3), 8.0);
  EXPECT_DOUBLE_EQ(m.median_gbps, 8.0);
  EXPECT_TRUE(m.outliers.empty());  // the pair is as fast as the view there is
  // No measured iteration: nothing is known, nothing is an outlier.
  const PairwiseMatrix none = pairwise_matrix(*plan, ranks, 0, 0.2);
  EXPECT_TRUE(std::isnan(none.at(0, 1)));
  EXPECT_TRUE(std::isnan(none.median_gbps));
  EXPECT_TRUE(none.outliers.empty());
  EXPECT_TRUE(none.suspects.empty());
}

}  // namespace
}  // namespace rocehil::traffic
