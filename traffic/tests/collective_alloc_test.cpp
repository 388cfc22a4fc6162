// The executor's loop allocates nothing per iteration or work request: every operator new in the
// process is counted while all ranks run 1 iteration, then 20; the two counts must be equal (what
// a run allocates, it allocates before its loop: result vectors, the rank threads).

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "allocation_counter.hpp"

#include "collective_job.hpp"

using rocehil::testing::allocations;

namespace rocehil::traffic {
namespace {

std::size_t allocations_of_a_run(Job& job, std::uint64_t iterations) {
  const std::size_t before = allocations();
  job.run({.warmup_iterations = 0, .iterations = iterations});
  const std::size_t used = allocations() - before;
  for (const auto& rank : job.ranks) EXPECT_EQ(rank.result.errors, 0u) << rank.result.first_error;
  return used;
}

TEST(CollectiveHotPath, IterationsAllocateNothing) {
  struct Shape {
    Pattern pattern;
    int ranks;
  };
  // The 12-rank ring has 22 steps a rank, more than the executor keeps resolved at once: its
  // steps are resolved again each iteration, into the same vectors.
  for (const Shape shape : {Shape{Pattern::ring_allreduce, 4}, Shape{Pattern::ring_allreduce, 12},
                            Shape{Pattern::alltoall, 4}, Shape{Pattern::tree_allreduce, 4},
                            Shape{Pattern::pairwise, 5}}) {
    SCOPED_TRACE(fmt::format("{} over {} ranks", to_string(shape.pattern), shape.ranks));
    for (const QpStrategy strategy : {QpStrategy::split, QpStrategy::round_robin}) {
      Job job({.pattern = shape.pattern, .ranks = shape.ranks, .bytes = 65536, .pipeline = 2},
              {.scaling = {2, strategy}});
      allocations_of_a_run(job, 2);  // first use: vectors inside the provider grow once
      const std::size_t one = allocations_of_a_run(job, 1);
      const std::size_t many = allocations_of_a_run(job, 20);
      EXPECT_EQ(one, many) << "allocations in the loop: " << many - one;
    }
  }
}

}  // namespace
}  // namespace rocehil::traffic
