#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "rocehil/traffic/collective.hpp"

// What the pattern files share: the factories make_plan() picks from, and the arithmetic of
// cutting a message into pieces.
namespace rocehil::traffic::plan {

std::unique_ptr<CollectivePlan> make_ring(const PlanOptions& options);
std::unique_ptr<CollectivePlan> make_alltoall(const PlanOptions& options);
std::unique_ptr<CollectivePlan> make_broadcast(const PlanOptions& options);
std::unique_ptr<CollectivePlan> make_tree(const PlanOptions& options);
std::unique_ptr<CollectivePlan> make_hierarchical(const PlanOptions& options);
std::unique_ptr<CollectivePlan> make_incast(const PlanOptions& options);
std::unique_ptr<CollectivePlan> make_permutation(const PlanOptions& options);
std::unique_ptr<CollectivePlan> make_pairwise(const PlanOptions& options);

inline int mod(long long a, int n) {
  const long long m = a % n;
  return static_cast<int>(m < 0 ? m + n : m);
}

struct Piece {
  std::uint64_t offset = 0;
  std::uint64_t bytes = 0;
};

// Piece i of `total` bytes cut in n: the first total % n pieces are one byte longer.
inline Piece piece(std::uint64_t total, int n, int i) {
  const auto un = static_cast<std::uint64_t>(n);
  const auto ui = static_cast<std::uint64_t>(i);
  const std::uint64_t base = total / un;
  const std::uint64_t extra = total % un;
  return {ui * base + (ui < extra ? ui : extra), base + (ui < extra ? 1 : 0)};
}

// Both ends of a transfer compute it the same way, so an empty one is simply left out on both.
inline void add(std::vector<Transfer>& to, const Transfer& t) {
  if (t.bytes > 0) to.push_back(t);
}

// A ring's chunk at `offset` (within the region), moved in place, or, when it reduces, landing
// `scratch` further on first.
inline Transfer chunk_transfer(int peer, std::uint64_t offset, std::uint64_t bytes, bool reduce,
                               std::uint64_t scratch) {
  return {.peer = peer,
          .src_offset = offset,
          .dst_offset = (reduce ? scratch : 0) + offset,
          .bytes = bytes,
          .reduce = reduce,
          .reduce_offset = offset};
}

// Sorted, distinct.
void normalize_peers(std::vector<int>& peers);

}  // namespace rocehil::traffic::plan
