#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "rocehil/agent/protocol.hpp"
#include "rocehil/common/scheduling.hpp"
#include "rocehil/traffic/nic_counters.hpp"
#include "rocehil/traffic/provider.hpp"
#include "rocehil/traffic/workload.hpp"

namespace rocehil::agent {

class AgentCapture;
class AgentCollective;
class AgentPerftest;
class AgentIperf3;
class ProgressSampler;

// What an agent does with the requests it reads: the state machine behind `rocehil agent`, and
// the local side of `rocehil traffic client` (in process, without JSON in between).
//
// States: idle -setup-> ready -connect-> connected -start-> running -(done|stop)-> finished.
// A request in the wrong state gets an error reply saying which request comes first. Traffic runs
// in one worker thread that owns the provider while it runs; everything else, replies included,
// happens on the caller's thread: handle() and tick() emit replies through `emit`.
class AgentSession {
 public:
  using Emit = std::function<void(const Reply&)>;
  using Clock = std::chrono::steady_clock;

  // `host_name`: the name this agent answers hello with (its launcher's name for the host, which
  // an inventory uses); empty: the host's own name.
  AgentSession(Emit emit, std::string version, std::string host_name = {});
  ~AgentSession();  // stops traffic and joins the worker
  AgentSession(const AgentSession&) = delete;
  AgentSession& operator=(const AgentSession&) = delete;

  void handle(const Request& request);

  // Emits what is due: stats every period, results when the worker has them. Call it when
  // wake_fd() is readable and no later than next_tick().
  void tick();
  // Readable (an eventfd) when the worker has results; the owner polls it with its input.
  int wake_fd() const { return wake_fd_; }
  // When tick() must run next; Clock::time_point::max() when nothing is timed.
  Clock::time_point next_tick() const;

  // The controller has gone: stop traffic, join the worker, release the provider. No replies.
  void shutdown();

 private:
  enum class State { idle, ready, connected, running, finished };

  void on_setup(std::optional<std::uint64_t> id, const SetupRequest& setup);
  void on_connect(std::optional<std::uint64_t> id, const ConnectRequest& connect);
  void on_start(std::optional<std::uint64_t> id, const StartRequest& start);
  void on_stop(std::optional<std::uint64_t> id);
  void on_capture_start(std::optional<std::uint64_t> id, const CaptureStartRequest& request);
  void on_capture_stop(std::optional<std::uint64_t> id);
  void on_perftest(std::optional<std::uint64_t> id, const PerftestRequest& request);
  void on_iperf3(std::optional<std::uint64_t> id, const Iperf3Request& request);
  void error(std::optional<std::uint64_t> id, std::string message);

  void run_worker(StartRequest start);
  void publish(ResultsEvent results, bool worker_continues);
  void join_worker();
  void request_stop();                   // the worker stops, woken if it waits for its start time
  void release();                        // QPs, CQ, memory, provider: in that order
  void finalize(ResultsEvent& results);  // counters and buffer checksums, worker joined
  void emit_stats(Clock::time_point now);

  Emit emit_;
  std::string version_;
  std::string host_name_;
  int wake_fd_ = -1;
  State state_ = State::idle;
  bool lat_receive_posted_ = false;  // at connect, for the first lat run (on_connect)
  bool bw_receives_posted_ = false;  // at connect, for the first bw run of a receiving side
  // A paced bw sender's, chosen at connect.
  std::optional<PacingReport> pacing_;

  // Captures are independent of the traffic state machine: a capture host may run only them.
  std::unique_ptr<AgentCapture> capture_;
  std::optional<std::uint64_t> capture_id_;
  // perftest runs are independent of the traffic state machine too, one at a time.
  std::unique_ptr<AgentPerftest> perftest_;
  std::optional<std::uint64_t> perftest_id_;
  // iperf3 (background traffic) likewise, beside the RDMA traffic of the same session.
  std::unique_ptr<AgentIperf3> iperf3_;
  std::optional<std::uint64_t> iperf3_id_;

  SetupRequest setup_;
  std::unique_ptr<traffic::Provider> provider_;
  std::unique_ptr<AgentCollective> collective_;  // workload collective: uses provider_
  std::vector<traffic::MemoryRegion> memory_;
  std::unique_ptr<traffic::CompletionQueue> cq_;
  std::vector<std::unique_ptr<traffic::QueuePair>> qps_;
  std::vector<traffic::Connection> connections_;

  // What bends the work's timing on this host, measured from the agreed start to its results
  // (the worker's own; a thread beside it, never in the work's loops).
  SchedulingProbe probe_;
  std::thread worker_;
  std::atomic<bool> stop_{false};
  // The worker sleeps to the agreed start time on this, woken early by a stop.
  std::mutex stop_mutex_;
  std::condition_variable stop_wake_;
  std::atomic<bool> worker_done_{false};
  traffic::LiveProgress progress_;
  std::mutex results_mutex_;
  std::optional<ResultsEvent> published_;     // from the worker, not yet emitted
  std::optional<ResultsEvent> last_results_;  // emitted; a stop after the end sends it again
  std::optional<std::uint64_t> start_id_;

  // The NIC the traffic uses, and its counters as they were when the QPs were connected (the
  // first run) or the work was started (a run after it).
  traffic::NicRef nic_;
  std::optional<traffic::NicCounterSnapshot> nic_before_;
  // The NIC's counters now: its netdev's and device's, and those only the provider keeps (the
  // soft NIC's pause counters), as ethtool/NAME where mlx5's `ethtool -S` has them.
  traffic::NicCounterSnapshot read_nic() const;

  Clock::time_point started_at_{};
  std::chrono::milliseconds stats_period_{0};
  Clock::time_point next_stats_ = Clock::time_point::max();
  std::uint64_t last_stats_bytes_ = 0;
  Clock::time_point last_stats_at_{};
  // A bw sender's delivered bytes (a collective rank's received bytes) every 10 ms, sampled here
  // (the control thread reads the workload's progress; the work's own loop does nothing more)
  // until its results go out.
  std::unique_ptr<ProgressSampler> sampler_;
  Clock::time_point next_sample_ = Clock::time_point::max();
  Clock::time_point next_idle_service_{};  // serve_idle of an idle provider
  void sample(Clock::time_point now);
  std::uint64_t timeline_bytes() const;
  std::uint64_t since_start_us(Clock::time_point now) const;
};

// The sampling period of a bw sender's timeline: 10 ms, as the plan's failover reading needs.
inline constexpr std::uint32_t timeline_period_us = 10'000;

}  // namespace rocehil::agent
