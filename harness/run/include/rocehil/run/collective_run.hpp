#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "rocehil/agent/protocol.hpp"
#include "rocehil/remote/agent_link.hpp"
#include "rocehil/traffic/collective.hpp"
#include "rocehil/traffic/collective_summary.hpp"
#include "rocehil/traffic/qp_scaling.hpp"

namespace rocehil::run {

// One collective test case (one size, one QP count) across agents, one agent per rank, as the
// controller runs it: setup every rank, hand each its peers' endpoints, run one iteration and
// check every rank's output against the CRC it must have, then run the measured iterations from
// one agreed start time and summarize them as nccl-tests does.

struct CollectiveJob {
  traffic::PlanOptions plan;
  traffic::QpScaling scaling;
  std::uint64_t sport_seed = 1;
  std::vector<std::uint16_t> pinned_sports;  // empty: drawn from sport_seed
  std::uint64_t warmup_iterations = 5;
  std::uint64_t iterations = 20;
  // Above 0: the measured run lasts about this long instead of `iterations`: its iterations are
  // chosen from how long one iteration took (the verified one, or one run to time it), since a
  // collective's ranks must all run the same number; at most max_timed_iterations.
  double duration_s = 0;
  bool verify = true;
  // From the start requests to the agreed start time; at least twice the connect round
  // (start_delay_after).
  std::chrono::milliseconds start_delay{500};
  std::chrono::seconds reply_timeout{30};  // each setup step, and silence during a run
  // Told the agreed wall-clock start (Unix ns) of the measured run, before any rank starts:
  // what is timed from the traffic's start (a PFC injection's after_s) waits for it.
  std::function<void(std::int64_t at_ns)> on_measured_start = {};
  // In a case with parts: the measured run's start, proposed as now + start_delay, becomes the
  // time the case's parts agreed on (every part proposes, the latest wins), so they run at once.
  std::function<std::int64_t(std::int64_t proposed_ns)> agree_start = {};
  std::int64_t stagger_ns = 0;  // rank r of the measured run starts r * stagger_ns later
};

// Who a rank is, for tables and JSON.
struct CollectiveRankInfo {
  std::string host;
  std::string nic;  // netdev, or RDMA device
  std::string address;
};

// The most iterations a run by duration chooses: every rank reports each iteration's end time.
inline constexpr std::uint64_t max_timed_iterations = 40000;

// Iterations for a run of `duration_s` when one took `iteration_s` (at least 1, at most
// max_timed_iterations).
std::uint64_t iterations_for(double duration_s, double iteration_s);

struct CollectiveCase {
  CollectiveJob job;                    // as run: a run by duration has the iterations it chose
  double timed_iteration_s = 0;         // by duration: how long the iteration that chose them took
  std::vector<std::string> rank_names;  // the agents: "h1", ...
  std::vector<agent::ResultsEvent> results;  // the measured run, per rank
  bool verified = false;                     // a verified iteration ran and every rank was compared
  int wrong = 0;                             // ranks whose output differed (nccl-tests' #wrong)
  std::vector<std::string> problems;         // "rank 2 (h3): output CRC-32 0x.. but 0x.. expected"
  traffic::CollectiveSummary summary;
  std::optional<traffic::PairwiseMatrix> matrix;  // pairwise only
  std::uint64_t errors = 0;                       // transport errors over all ranks
  std::string first_error;
  bool interrupted = false;
};

// `links[r]` is rank r's agent, already greeted; `setups[r]` carries its provider, device,
// port, GID index, address, MTU and traffic class (the rest is filled in here). Throws
// rocehil::Error: bad input when an agent refuses a request, infrastructure when one dies or
// stays silent. `on_progress(done, total)` follows rank 0's measured iterations.
CollectiveCase run_collective_case(
    const std::vector<remote::AgentLink*>& links, const std::vector<agent::SetupRequest>& setups,
    const CollectiveJob& job, const std::function<void(std::uint64_t, std::uint64_t)>& on_progress,
    const std::atomic<bool>& interrupt);

// The endpoints rank `rank` must connect to, in its QP order (peer by peer in ascending rank,
// qps each), picked from every rank's setup reply. Throws when a reply has the wrong length.
std::vector<agent::PeerEndpoint> peers_for(
    const traffic::CollectivePlan& plan, int rank, std::uint32_t qps,
    const std::vector<std::vector<agent::PeerEndpoint>>& endpoints);

// How long after sending the start requests the ranks start: `configured`, or twice how long
// the connect round over every rank took when that is longer. Every rank must have its start
// request before the first begins: a rank that starts late answers nothing meanwhile, and its
// peers' QPs run out of retries (at 3,072 ranks on 2 cores a round took 7 s, not 500 ms).
std::chrono::milliseconds start_delay_after(std::chrono::milliseconds configured,
                                            std::chrono::steady_clock::duration connect_round);

// The rank to blame when ranks reported transport errors: each rank with an error votes for
// itself and for the peer its failing QP talks to; the most votes win, a tie goes to the rank
// more often named as the peer (the host whose link went down is every failing QP's far end).
// -1 when there were no errors.
int failing_rank(const CollectiveCase& c);

// The rank that rank `rank`'s first failing QP talks to (its first_error names the QP: "QP
// 0x1a2b: ..."), or -1 when it names none of its QPs.
int failing_peer(const CollectiveCase& c, std::size_t rank);

// Every QP's counters of every rank, summed: what all of them measured.
traffic::QpCounters summed_qp_counters(const CollectiveCase& c);

}  // namespace rocehil::run
