#pragma once

// What a collective must leave in every rank's region, from the pattern's definition rather than
// from the planner: shared by the planner's simulation test and the executor's test on the soft
// provider. Inputs are a fixed function of (rank, offset); reductions are XOR.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "rocehil/traffic/collective.hpp"
#include "rocehil/traffic/ring_plan.hpp"

namespace rocehil::traffic {

using Bytes = std::vector<std::uint8_t>;

inline std::uint8_t input_byte(int rank, std::uint64_t offset) {
  std::uint64_t x = (static_cast<std::uint64_t>(rank) + 1) * 0x9e3779b97f4a7c15ull + offset;
  x = (x ^ (x >> 29)) * 0xbf58476d1ce4e5b9ull;
  return static_cast<std::uint8_t>(x >> 56);
}

inline Bytes xor_of_inputs(int ranks, std::uint64_t bytes) {
  Bytes sum(bytes, 0);
  for (int r = 0; r < ranks; ++r)
    for (std::uint64_t i = 0; i < bytes; ++i) sum[i] ^= input_byte(r, i);
  return sum;
}

// Patterns whose result is one fixed content (incast's receive area holds whichever sender
// landed last; permutation's depends on the drawn cycle; pairwise's on the last round).
inline bool has_definite_output(Pattern p) {
  return p != Pattern::incast && p != Pattern::permutation && p != Pattern::pairwise;
}

// `region(r, i)`: byte i of rank r's region.
template <typename Region>
void expect_outputs(const PlanOptions& o, const Region& region) {
  const int n = o.ranks;
  const std::uint64_t b = o.bytes;
  switch (o.pattern) {
    case Pattern::ring_allreduce:
    case Pattern::tree_allreduce:
    case Pattern::hierarchical_allreduce: {
      const Bytes sum = xor_of_inputs(n, b);
      for (int r = 0; r < n; ++r)
        for (std::uint64_t i = 0; i < b; ++i)
          ASSERT_EQ(region[r][i], sum[i]) << "rank " << r << " byte " << i;
      return;
    }
    case Pattern::ring_reduce_scatter: {
      const Bytes sum = xor_of_inputs(n, b);
      const RingPlan ring(RingCollective::reduce_scatter, n, b);
      for (int r = 0; r < n; ++r) {
        const Chunk c = ring.chunk(r);
        for (std::uint64_t i = c.offset; i < c.offset + c.bytes; ++i)
          ASSERT_EQ(region[r][i], sum[i]) << "rank " << r << " byte " << i;
      }
      return;
    }
    case Pattern::ring_allgather: {
      const RingPlan ring(RingCollective::allgather, n, b);
      for (int r = 0; r < n; ++r)
        for (int c = 0; c < n; ++c)
          for (std::uint64_t i = ring.chunk(c).offset;
               i < ring.chunk(c).offset + ring.chunk(c).bytes; ++i)
            ASSERT_EQ(region[r][i], input_byte(c, i)) << "rank " << r << " chunk " << c;
      return;
    }
    case Pattern::alltoall: {
      const std::uint64_t block = b / n;
      for (int r = 0; r < n; ++r)
        for (int p = 0; p < n; ++p)
          for (std::uint64_t i = 0; p != r && i < block; ++i)
            ASSERT_EQ(region[r][b + p * block + i], input_byte(p, r * block + i))
                << "rank " << r << " from " << p;
      return;
    }
    case Pattern::broadcast:
      for (int r = 0; r < n; ++r)
        for (std::uint64_t i = 0; i < b; ++i)
          ASSERT_EQ(region[r][i], input_byte(0, i)) << "rank " << r;
      return;
    default: FAIL() << "no definite output for " << to_string(o.pattern);
  }
}

}  // namespace rocehil::traffic
