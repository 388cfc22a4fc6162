#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "rocehil/traffic/collective.hpp"
#include "rocehil/traffic/provider.hpp"
#include "rocehil/traffic/qp_scaling.hpp"
#include "rocehil/traffic/workload.hpp"

namespace rocehil::traffic {

// Runs one rank of a collective plan over any Provider: its steps in order, each step's sends
// posted as soon as the data they carry has arrived, for warm-up and measured iterations.
//
// Data moves as RDMA WRITE_WITH_IMM: every share of a transfer (QP scaling cuts a transfer in
// shares, or rotates whole transfers over the QPs) is written straight to its place in the
// peer's region, and the immediate tells the peer which step (and share) arrived. Reductions
// are XOR, done by the receiver when a share arrives, so a verified iteration has one right
// answer. Ranks are not synchronized between iterations: like NCCL, a rank starts the next one
// when its own part of the last is done.

// One peer of this rank: its QPs (scaling.qps of them, connected to the peer's QPs for this pair,
// in the same order) and its region.
struct PeerConnection {
  int peer = 0;
  std::vector<QueuePair*> qps;
  std::uint64_t remote_address = 0;
  std::uint32_t rkey = 0;
};

struct CollectiveConfig {
  QpScaling scaling;
  bool reduce = true;  // XOR reduced data in place (host memory only)
};

struct CollectiveRun {
  std::uint64_t warmup_iterations = 2;
  std::uint64_t iterations = 10;
  // Optional: iterations done and bytes sent at each iteration's end, bytes received at each
  // receive completion.
  LiveProgress* progress = nullptr;
};

struct CollectiveResult {
  std::uint64_t iterations = 0;  // measured iterations that completed
  // Wall clock (Unix ns) when the measured part started and when each measured iteration ended
  // on this rank: the controller takes the latest rank's end of each iteration for the
  // collective's completion time.
  std::int64_t start_ns = 0;
  std::vector<std::int64_t> iteration_end_ns;
  // Per step, summed over the measured iterations: time this rank had reached the step and sat
  // waiting for its data. The rank others wait for least is the straggler.
  std::vector<std::uint64_t> wait_ns;
  // Per step, summed over the measured iterations: from the step becoming this rank's oldest
  // unfinished one, or from its first post when it went out before that, to its end. For
  // pairwise, a data step's time is that pair's exchange.
  std::vector<std::uint64_t> step_ns;
  std::uint64_t bytes_sent = 0, bytes_received = 0;  // measured iterations
  std::vector<QpBwResult> per_qp;                    // every QP of every peer, in connection order
  std::uint64_t errors = 0;
  std::string first_error;
  std::optional<WcStatus> first_error_status;  // as BwResult's
  bool stopped = false;
};

// Receives each QP of this rank's connection to a peer must keep posted so that the peer one
// iteration ahead never meets RNR: twice the most that QP receives from it in one iteration,
// plus 16, at most 16384. One per peer, in plan.peers() order: a ring rank's QPs to its next
// rank, which never sends to it, keep 16, not thousands.
std::vector<std::uint32_t> receive_depths(const CollectivePlan& plan, int rank,
                                          const QpScaling& scaling);
// The largest of them (16 for a rank without peers).
std::uint32_t receive_depth(const CollectivePlan& plan, int rank, const QpScaling& scaling);

// Sends each QP of this rank's connection to a peer can have outstanding: the most it sends that
// peer in one iteration (an iteration's sends have all completed before the next one posts), at
// least 1 and at most max_send_depth. One per peer, in plan.peers() order. What sizes the CQ:
// thousands of QPs per connection at a flat 256 each would ask more than a ConnectX CQ holds.
inline constexpr std::uint32_t max_send_depth = 256;
std::vector<std::uint32_t> send_depths(const CollectivePlan& plan, int rank,
                                       const QpScaling& scaling);

class CollectiveRunner {
 public:
  // Throws rocehil::Error (bad input): a peer of the plan without a connection, a connection
  // with the wrong number of QPs, a region smaller than the plan's, a share over 1 GiB.
  CollectiveRunner(const CollectivePlan& plan, int rank, CollectiveConfig config,
                   CompletionQueue& cq, const MemoryRegion& region,
                   std::vector<PeerConnection> connections);
  ~CollectiveRunner();
  CollectiveRunner(const CollectiveRunner&) = delete;
  CollectiveRunner& operator=(const CollectiveRunner&) = delete;

  // Posts the receives. Call it on every rank before any rank starts running.
  void prepare();
  // Warm-up then measured iterations; `stop` ends early. Allocates nothing once running. A rank
  // may run again when every rank's last run ended by itself (not stopped, no error).
  CollectiveResult run(const CollectiveRun& length, const std::atomic<bool>& stop);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace rocehil::traffic
