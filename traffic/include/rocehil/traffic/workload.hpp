#pragma once

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "rocehil/traffic/histogram.hpp"
#include "rocehil/traffic/provider.hpp"
#include "rocehil/traffic/stall_watch.hpp"

namespace rocehil::traffic {

// Point-to-point workloads, written once against the Provider interface (design: workloads run
// the same on verbs and soft). One side of a test runs in one thread with its own provider.

// A connected QP with the memory it uses and the peer's memory it targets.
struct Connection {
  QueuePair* qp = nullptr;
  const MemoryRegion* local = nullptr;
  std::uint64_t remote_address = 0;
  std::uint32_t rkey = 0;
  // Where in `local` messages from the peer land (receives); sends and READ targets use offset 0.
  // Keeping the two apart lets a test compare what left one side with what arrived on the other.
  std::uint64_t receive_offset = 0;
};

// What a running workload has done so far, for live stats read from another thread. The
// workload adds to it after each poll (relaxed atomics: a few instructions, no allocation).
struct LiveProgress {
  std::atomic<std::uint64_t> messages{0};  // completed, warm-up included
  std::atomic<std::uint64_t> bytes{0};
  // A collective rank's bytes arrived, added at each receive completion (warm-up included): its
  // timeline, fine-grained where `bytes` moves once an iteration.
  std::atomic<std::uint64_t> received_bytes{0};
};

struct BwConfig {
  Opcode opcode = Opcode::write;  // write, write_with_imm, send or read
  std::uint32_t message_bytes = 65536;
  std::uint32_t tx_depth = 64;   // messages outstanding per QP
  std::uint64_t iterations = 0;  // messages in total after warm-up; 0: run for `seconds`
  // By volume (a suite's bytes:): every connection sends exactly this many messages, with no
  // warm-up (all of them measured); `iterations`, `seconds` and `warmup_seconds` are then unused.
  // 0: not by volume.
  std::uint64_t messages_per_qp = 0;
  double seconds = 2;
  double warmup_seconds = 0.2;  // messages completing in it are not measured
  // Bidirectional runs: the requester also serves the peer's traffic on the same QPs, keeping
  // receives posted when the opcode consumes them.
  bool serve_peer = false;
  LiveProgress* progress = nullptr;  // optional
  // The receive rings are already posted (post_bw_receive_rings, at connect): a peer whose start
  // comes first would otherwise be RNR-NAKed until rnr_retry ran out.
  bool receives_posted = false;
  // Once posting ended, requests still outstanding with no completion for this long are lost:
  // the run ends with an error naming the QP.
  double lost_after_seconds = 10;
  // Engine pacing (pacing.hpp): what all the connections send together, in payload bits per
  // second, held by a token bucket that delays posting. 0: as fast as the QPs take work.
  double rate_bps = 0;
};

// Posts the receive rings a receiving side keeps full, when `config.opcode` consumes receives
// (send, write_with_imm); returns whether it did.
bool post_bw_receive_rings(std::vector<Connection>& connections, const BwConfig& config);

struct QpBwResult {
  std::uint32_t qpn = 0;
  std::uint16_t udp_sport = 0;
  std::uint64_t messages = 0;
  std::uint64_t bytes = 0;
  double gbps = 0;
  QpCounters counters;
  // A bw requester's QP: its longest wait for a completion with work outstanding, from_ns since
  // the run's start (stall_watch.hpp); none before its first completion, or from other workloads.
  std::optional<QpStall> longest_stall{};
};

struct BwResult {
  double seconds = 0;  // measured interval, warm-up excluded
  std::uint64_t messages = 0;
  std::uint64_t bytes = 0;
  double gbps = 0;  // payload bits per second, 1e9
  double messages_per_s = 0;
  std::vector<QpBwResult> per_qp;
  std::uint64_t errors = 0;
  std::string first_error;  // "QP 0x1a2: remote_access_error", empty without errors
  // The status of the failed completion first_error describes; absent when the first error was
  // no completion (a post refused, a CQ that broke, requests that never completed).
  std::optional<WcStatus> first_error_status;
  // Paced by the engine: the measured time its token bucket kept the sender from posting while
  // its queues had room. Near 0 with a rate short of the one asked means the sender (its CPU, NIC
  // or path) was the limit, not the pacer. 0 unpaced.
  std::uint64_t pacer_held_ns = 0;
  // Paced by the engine: the measured time's worth of rate that found its bucket full and was
  // lost while the sender was away (asleep past its wake-up, or its queues full): a sender that
  // falls short with much of it lost was slow to come back, not held back. 0 unpaced.
  std::uint64_t pacer_lost_ns = 0;
  // Paced by the engine: the burst its bucket ended with (widened for a host that woke the sender
  // late: burst_for_gap). 0 unpaced.
  double pacer_burst_bits = 0;
};

// Counts a failed completion among a run's errors and keeps it as the first error when it is
// the first, or when it names a cause where only a flush was kept: a flush says its QP had
// already failed, and the completion that failed it is what grading must see.
void note_failure(const Completion& completion, std::uint64_t& errors, std::string& first_error,
                  std::optional<WcStatus>& first_error_status);

// The requester side: keeps `tx_depth` messages in flight on every connection, spreading them
// round-robin, until the iterations or the time are done, then waits for what is in flight.
// `stop` ends it early (Ctrl-C, the controller). Returns what completed.
BwResult run_bw_requester(CompletionQueue& cq, std::vector<Connection>& connections,
                          const BwConfig& config, const std::atomic<bool>& stop);

// The passive side: keeps receives posted when the opcode consumes them (send,
// write_with_imm) and polls its CQ (on soft, that runs the responder) until `stop`.
// Returns the receive completions seen. With `config.progress`, receives are counted there.
std::uint64_t serve(CompletionQueue& cq, std::vector<Connection>& connections,
                    const BwConfig& config, const std::atomic<bool>& stop);

struct LatConfig {
  std::uint32_t message_bytes = 8;
  std::uint64_t iterations = 10000;
  std::uint64_t warmup_iterations = 100;
  LiveProgress* progress = nullptr;  // optional: ping-pongs done
  // The first receive is already posted (post_lat_receive, at connect): the peer may send as
  // soon as its own start comes, and a host whose start comes a few milliseconds later would
  // otherwise be RNR-NAKed until rnr_retry ran out.
  bool receive_posted = false;
};

struct LatResult {
  LatencyHistogram one_way;  // half the round trip, as perftest reports
  std::uint64_t errors = 0;
  std::string first_error;
  std::optional<WcStatus> first_error_status;  // as BwResult's
};

// The receive a ping-pong keeps posted, posted once before the peer can send (LatConfig::
// receive_posted).
PostResult post_lat_receive(Connection& connection, std::uint32_t message_bytes);

// Ping-pong with SEND over one connection: the initiator sends and waits for the pong, the
// other side answers each ping. Both sides call it; `initiator` says which one this is.
LatResult run_lat(CompletionQueue& cq, Connection& connection, const LatConfig& config,
                  bool initiator, const std::atomic<bool>& stop);

}  // namespace rocehil::traffic
