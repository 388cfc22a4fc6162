#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "rocehil/agent/protocol.hpp"
#include "rocehil/remote/agent_link.hpp"
#include "rocehil/suites/threshold.hpp"

namespace rocehil::run {

// One iperf3 run between two agents (workload iperf3, background traffic that is not RDMA): the
// server side first, the client once the server's iperf3 listens, at the client's at_ns, then
// both sides' results. iperf3's own failures come back in the results, not as exceptions.
//
// A self-contained unit, start / poll / result, so that a case running it beside RDMA traffic
// can drive it from its own loop: the links are this pair's alone while it runs (another
// workload's replies on them would be taken as this one's).

struct Iperf3PairConfig {
  agent::Iperf3Request server;  // role server; port 0: its agent picks a free one
  agent::Iperf3Request client;  // role client; `server` is the server's address, `port` is filled
                                // in from the server's iperf3_listening
  std::chrono::seconds reply_timeout{30};  // hello, and the server's iperf3 coming up
  // With client.at_ns 0: the client's start is agreed as this long after it is asked (once the
  // server listens), so that whoever waits for the start (an injection) is ready; 0: at once.
  std::chrono::milliseconds start_after{0};
  // In a case with parts: the client's start, proposed as above, becomes the time the case's
  // parts agreed on (CollectiveJob::agree_start).
  std::function<std::int64_t(std::int64_t proposed_ns)> agree_start = {};
};

struct Iperf3Side {
  std::string name;
  agent::HelloReply hello;
  std::optional<agent::Iperf3ResultsEvent> results;  // absent: never started (server failed)
};

struct Iperf3PairResult {
  Iperf3Side client, server;
  bool interrupted = false;
};

class Iperf3Pair {
 public:
  Iperf3Pair(remote::AgentLink& client, remote::AgentLink& server, Iperf3PairConfig config);

  // Greets both agents, starts the server side and, once it listens, the client side. Returns
  // with the client asked to start, or with done() when the server failed first. Throws
  // rocehil::Error: bad input when an agent refuses a request, infrastructure when one is silent.
  void start(const std::atomic<bool>& interrupt);
  // Reads what the agents say for at most `slice`; true once both sides' results are in. Throws
  // (infrastructure) when the client is silent past its time limit and the reply timeout, or a
  // stopped server does not end.
  bool poll(std::chrono::milliseconds slice);
  // Asks both sides still running to stop (their results, marked stopped, still come).
  void stop();
  bool done() const;
  // Seconds since the client was asked to start; 0 before.
  double seconds_running() const;
  // The client's agreed start (wall clock, Unix ns; 0: at once), once it was asked to start.
  bool client_started() const { return client_started_.has_value(); }
  const Iperf3PairResult& result() const { return result_; }
  const Iperf3PairConfig& config() const { return config_; }

 private:
  using Clock = remote::AgentLink::Clock;
  std::optional<agent::Reply> next(remote::AgentLink& link, Clock::time_point deadline);

  remote::AgentLink& client_;
  remote::AgentLink& server_;
  Iperf3PairConfig config_;
  Iperf3PairResult result_;
  std::optional<Clock::time_point> client_started_;
  Clock::time_point client_deadline_{};
  std::optional<Clock::time_point> server_deadline_;
  bool stop_sent_ = false;
};

// The whole run: start, poll until done (a stop sent on `interrupt`). `on_running` sees the
// seconds since the client started, about every 50 ms.
Iperf3PairResult run_iperf3_pair(remote::AgentLink& client, remote::AgentLink& server,
                                 const Iperf3PairConfig& config,
                                 const std::function<void(double seconds)>& on_running,
                                 const std::atomic<bool>& interrupt);

// What went wrong, naming the side's host: the server's failure first (the client's then only
// follows from it), then the client's; nothing when both sides ran and the receiver reported.
struct Iperf3Failure {
  std::string side;  // the agent link's name
  std::string message;
};
std::optional<Iperf3Failure> iperf3_failure(const Iperf3PairResult& result);

// The case's metrics: iperf_gbps (the receiver's bits/s: the server's own sum_received, else
// the client's copy of it), iperf_loss_ratio (UDP: lost_packets / packets at the receiver) and
// iperf_retransmits (TCP: the client's sum_sent); what the protocol cannot give is absent with
// why, and so is everything when iperf3 failed.
suites::Measured iperf3_metrics(const Iperf3PairResult& result);

// run.json's traffic section of an iperf3 case: each side's request, the words it ran, its exit
// code, report, error and output's last lines.
nlohmann::json iperf3_pair_json(const Iperf3PairConfig& config, const Iperf3PairResult& result);

}  // namespace rocehil::run
