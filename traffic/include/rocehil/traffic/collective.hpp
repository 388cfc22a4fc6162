#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

namespace rocehil::traffic {

// Collective communication patterns, planned lazily: a rank asks for its own steps, one at a time,
// and nothing of size N x N is ever built, whatever the number of ranks.
//
// Every rank registers one region of region_bytes(). A transfer moves `bytes` from src_offset in
// the sender's region to dst_offset in the receiver's; a reducing transfer lands in the
// receiver's scratch and is then combined (XOR, so the result can be checked) into reduce_offset.
// A rank runs its steps in order; a step's sends wait for what its `after` names, and the step is
// done when its sends have completed and its receives have arrived.
enum class Pattern : std::uint8_t {
  ring_allreduce,          // reduce-scatter then allgather around a ring
  ring_allgather,          //
  ring_reduce_scatter,     //
  alltoall,                // pairwise exchange: at step s rank r sends to r+s, receives from r-s
  broadcast,               // a pipelined chain from rank 0
  tree_allreduce,          // double binary tree, each tree carrying half the message
  hierarchical_allreduce,  // local reduce-scatter, a ring per rail across hosts, local allgather
  incast,                  // every other rank sends its message to rank 0 at once
  permutation,             // every rank sends to one other rank, each rank receiving once
  pairwise,                // all pairs, N-1 rounds of a round-robin tournament, both ways
};

std::string_view to_string(Pattern pattern);
std::optional<Pattern> pattern_from_name(std::string_view name);
const std::vector<Pattern>& all_patterns();

// nccl-tests' bus bandwidth factor (busbw = algbw x factor): allreduce 2(n-1)/n; allgather,
// reduce-scatter and alltoall (n-1)/n; broadcast 1. For rocehil's own patterns: permutation and
// pairwise 1 (each rank sends its message once per round); incast n-1, so busbw is what arrives
// at the one receiver.
double busbw_factor(Pattern pattern, int ranks);

struct Transfer {
  int peer = 0;  // the rank on the other end
  std::uint64_t src_offset = 0;
  std::uint64_t dst_offset = 0;
  std::uint64_t bytes = 0;
  bool reduce = false;  // the receiver XORs dst_offset.. into reduce_offset.. once it arrived
  std::uint64_t reduce_offset = 0;
};

// When a step's sends may be posted.
enum class After : std::uint8_t {
  start,              // when the iteration starts
  earlier_receives,   // once every receive of the earlier steps has arrived (a ring forwards)
  through_this_step,  // once this step's receives have arrived too (a chain forwards the piece
                      // it just got; a tree node sends up what its children sent)
};

struct Step {
  std::vector<Transfer> sends;
  std::vector<Transfer> receives;
  After after = After::start;
  void clear() {
    sends.clear();
    receives.clear();
    after = After::start;
  }
};

struct PlanOptions {
  Pattern pattern = Pattern::ring_allreduce;
  int ranks = 2;
  std::uint64_t bytes = 1 << 20;  // per rank, as nccl-tests counts a collective's size
  // hierarchical_allreduce: ranks per host (rank = host x ranks_per_host + local rank; the local
  // rank is the rail). Must divide `ranks`.
  int ranks_per_host = 1;
  // broadcast and tree_allreduce: pieces the message is pipelined in (per tree for the tree).
  int pipeline = 8;
  std::uint64_t seed = 1;  // permutation: which one
};

class CollectivePlan {
 public:
  virtual ~CollectivePlan() = default;
  Pattern pattern() const { return options_.pattern; }
  int ranks() const { return options_.ranks; }
  std::uint64_t bytes() const { return options_.bytes; }
  const PlanOptions& options() const { return options_; }

  virtual std::uint64_t region_bytes() const = 0;
  virtual int steps(int rank) const = 0;
  // Fills `out` with rank `rank`'s step `step`; reuses its capacity, so enumerating allocates
  // nothing once the vectors have grown. Throws rocehil::Error (bad input) out of range.
  virtual void step(int rank, int step, Step& out) const = 0;
  // The ranks this one sends to or receives from, ascending and distinct: the connections it
  // needs. The default walks the steps; patterns with few peers answer directly.
  virtual void peers(int rank, std::vector<int>& out) const;

  // The part of the region that holds the input before the first iteration ([offset, +bytes)).
  struct Range {
    std::uint64_t offset = 0;
    std::uint64_t bytes = 0;
  };
  virtual std::vector<Range> inputs(int rank) const = 0;
  // Where the result is once an iteration is done (nothing for a rank that only sends).
  virtual std::vector<Range> outputs(int rank) const = 0;

 protected:
  explicit CollectivePlan(const PlanOptions& options) : options_(options) {}
  void check_step(int rank, int step) const;

 private:
  PlanOptions options_;
};

// The first rank with more than `most` peers, and how many it has; nothing when no rank has.
// Cheap at any size: nothing to walk when ranks - 1 <= most, and where a rank has more, rank 0
// (incast's receiver, every alltoall or pairwise rank) or a nearby one says so, while the
// patterns whose ranks all have few peers answer each in constant time.
struct RankPeers {
  int rank = 0;
  std::size_t peers = 0;
};
std::optional<RankPeers> rank_with_more_peers_than(const CollectivePlan& plan, std::size_t most);

// Throws rocehil::Error (bad input) naming the option and the fix: fewer than 2 ranks,
// ranks_per_host not dividing ranks, a pipeline outside 1..1024.
std::unique_ptr<CollectivePlan> make_plan(const PlanOptions& options);

}  // namespace rocehil::traffic
