#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace rocehil::traffic {

// Ring collectives planned lazily: a rank asks for its own step and gets it in O(1), so nothing
// of size N (let alone N^2) is ever built, whatever the number of ranks.
//
// The message of `bytes` is cut into N chunks (the first bytes % N one byte longer). Rank r sends
// to r+1 and receives from r-1 (mod N) at every step:
// - reduce-scatter, N-1 steps: at step s rank r sends chunk (r-s-1) and receives chunk (r-s-2),
//   which it reduces into its own copy; afterwards rank r holds chunk r fully reduced.
// - allgather, N-1 steps: at step s rank r sends chunk (r-s) and receives chunk (r-s-1); it starts
//   with chunk r and ends with all of them.
// - allreduce: reduce-scatter then allgather, 2(N-1) steps.
enum class RingCollective { allreduce, reduce_scatter, allgather };

std::string_view to_string(RingCollective c);
std::optional<RingCollective> ring_collective_from_name(std::string_view name);

// nccl-tests' bus bandwidth factor (busbw = algbw x factor): allreduce 2(n-1)/n, reduce-scatter
// and allgather (n-1)/n.
double busbw_factor(RingCollective c, int ranks);

struct Chunk {
  int index = 0;
  std::uint64_t offset = 0;
  std::uint64_t bytes = 0;
};

struct RingStep {
  int send_to = 0;
  int receive_from = 0;
  Chunk send;
  Chunk receive;
  bool reduce = false;  // the received chunk is reduced into the local one (else copied)
};

class RingPlan {
 public:
  // Throws rocehil::Error (bad input) for fewer than 2 ranks. A message shorter than the ring
  // gives some empty chunks, which is what a real ring does with it.
  RingPlan(RingCollective collective, int ranks, std::uint64_t bytes);

  int ranks() const { return ranks_; }
  int steps() const;  // 2(N-1) for allreduce, N-1 otherwise
  Chunk chunk(int index) const;
  // Rank `rank`'s step `step` (0-based). Throws for a rank or step out of range.
  RingStep step(int rank, int step) const;

 private:
  RingCollective collective_;
  int ranks_;
  std::uint64_t bytes_;
};

}  // namespace rocehil::traffic
