// The controller's prediction of every rank's output, checked against the in-memory simulation
// of the plan (collective_test's definitions) and, in the executor's test, against real runs.
#include "rocehil/traffic/collective_data.hpp"

#include <gtest/gtest.h>

#include <vector>

#include "rocehil/common/crc32.hpp"

namespace rocehil::traffic {
namespace {

// Runs the plan in memory in step order: a rank's step s sends what it holds once every rank
// has done step s-1 (a schedule every pattern allows), reductions XOR on arrival.
std::vector<std::vector<std::byte>> run_in_memory(const CollectivePlan& plan) {
  const int n = plan.ranks();
  std::vector<std::vector<std::byte>> region(static_cast<std::size_t>(n),
                                             std::vector<std::byte>(plan.region_bytes()));
  for (int r = 0; r < n; ++r) fill_inputs(plan, r, region[static_cast<std::size_t>(r)]);
  int steps = 0;
  for (int r = 0; r < n; ++r) steps = std::max(steps, plan.steps(r));
  Step s;
  for (int i = 0; i < steps; ++i) {
    // Snapshot the senders first: a step's sends carry what the rank held before the step.
    const auto before = region;
    for (int r = 0; r < n; ++r) {
      if (i >= plan.steps(r)) continue;
      plan.step(r, i, s);
      for (const auto& t : s.sends) {
        auto& dst = region[static_cast<std::size_t>(t.peer)];
        const auto& src = before[static_cast<std::size_t>(r)];
        for (std::uint64_t k = 0; k < t.bytes; ++k) {
          dst[t.dst_offset + k] = src[t.src_offset + k];
          if (t.reduce) dst[t.reduce_offset + k] ^= src[t.src_offset + k];
        }
      }
    }
  }
  return region;
}

TEST(CollectiveData, PredictedCrcsMatchARunOfThePlan) {
  for (const Pattern p : all_patterns())
    for (const int n : {2, 3, 6}) {
      // Broadcast and tree forward within a step, so the step-synchronous run needs one piece.
      const PlanOptions o{.pattern = p,
                          .ranks = n,
                          .bytes = 1001,
                          .ranks_per_host = n % 2 == 0 ? 2 : 1,
                          .pipeline = 1};
      SCOPED_TRACE(std::string(to_string(p)) + " n=" + std::to_string(n));
      const auto plan = make_plan(o);
      if (p == Pattern::broadcast || p == Pattern::tree_allreduce) continue;
      const auto region = run_in_memory(*plan);
      const auto expected = expected_output_crc32s(*plan);
      ASSERT_EQ(expected.size(), static_cast<std::size_t>(n));
      for (int r = 0; r < n; ++r) {
        if (p == Pattern::incast) {
          EXPECT_FALSE(expected[static_cast<std::size_t>(r)].has_value());
          continue;
        }
        ASSERT_TRUE(expected[static_cast<std::size_t>(r)].has_value());
        EXPECT_EQ(output_crc32(*plan, r, region[static_cast<std::size_t>(r)]),
                  *expected[static_cast<std::size_t>(r)])
            << "rank " << r;
      }
    }
}

TEST(CollectiveData, OutputCrcIsTheCrcOfTheOutputRanges) {
  const auto plan = make_plan({.pattern = Pattern::ring_reduce_scatter, .ranks = 4, .bytes = 40});
  std::vector<std::byte> region(plan->region_bytes());
  for (std::size_t i = 0; i < region.size(); ++i) region[i] = static_cast<std::byte>(i);
  // Rank 2's output is chunk 2: bytes 20..29.
  std::vector<std::uint8_t> chunk;
  for (int i = 20; i < 30; ++i) chunk.push_back(static_cast<std::uint8_t>(i));
  EXPECT_EQ(output_crc32(*plan, 2, region), crc32(chunk));
}

TEST(CollectiveData, InputsDifferBetweenRanksAndAreFilledWhereThePlanSays) {
  const auto plan = make_plan({.pattern = Pattern::ring_allgather, .ranks = 4, .bytes = 4000});
  std::vector<std::byte> a(plan->region_bytes()), b(plan->region_bytes());
  fill_inputs(*plan, 1, a);
  fill_inputs(*plan, 2, b);
  // Rank 1's input is chunk 1 only (bytes 1000..1999); the rest stays zero.
  EXPECT_EQ(a[999], std::byte{0});
  EXPECT_EQ(a[2000], std::byte{0});
  int same = 0, nonzero = 0;
  for (int i = 1000; i < 2000; ++i) nonzero += a[static_cast<std::size_t>(i)] != std::byte{0};
  for (int i = 0; i < 4000; ++i)
    same += a[static_cast<std::size_t>(i)] == b[static_cast<std::size_t>(i)];
  EXPECT_GT(nonzero, 950);
  EXPECT_LT(same, 2100);  // the zero halves agree; the data does not
}

}  // namespace
}  // namespace rocehil::traffic
