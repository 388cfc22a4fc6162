// The executor's loop allocates nothing per iteration or work request: every operator new in the
// process is counted while all ranks run 1 iteration, then 60; the two counts must be equal (what
// a run allocates, it allocates before its loop: result vectors, the rank threads).

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
  for (const Pattern p : {Pattern::ring_allreduce, Pattern::alltoall, Pattern::tree_allreduce}) {
    SCOPED_TRACE(std::string(to_string(p)));
    for (const QpStrategy strategy : {QpStrategy::split, QpStrategy::round_robin}) {
      Job job({.pattern = p, .ranks = 4, .bytes = 65536, .pipeline = 2},
              {.scaling = {2, strategy}});
      allocations_of_a_run(job, 2);  // first use: vectors inside the provider grow once
      const std::size_t one = allocations_of_a_run(job, 1);
      const std::size_t many = allocations_of_a_run(job, 60);
      EXPECT_EQ(one, many) << "allocations in the loop: " << many - one;
    }
  }
}

}  // namespace
}  // namespace rocehil::traffic
