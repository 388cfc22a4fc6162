#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <optional>
#include <string>

#include "rocehil/agent/protocol.hpp"
#include "rocehil/remote/agent_link.hpp"
#include "rocehil/suites/threshold.hpp"

namespace rocehil::run {

// One perftest run between two agents (engine: perftest): the server side first, the client
// once the server's perftest listens, then both sides' results. perftest's own failures ("Did
// not detect devices", "Couldn't connect to ...") come back in the results, not as exceptions.

struct PerftestPairConfig {
  agent::PerftestRequest server;  // role server; tcp_port 0: its agent picks a free one
  agent::PerftestRequest client;  // role client; `server` is the server's address, tcp_port is
                                  // filled in from the server's perftest_listening
  std::chrono::seconds reply_timeout{30};  // hello, and the server's perftest coming up
};

struct PerftestSide {
  std::string name;
  agent::HelloReply hello;
  std::optional<agent::PerftestResultsEvent> results;  // absent: never started (server failed)
};

struct PerftestPairResult {
  PerftestSide client, server;
  bool interrupted = false;
};

// Throws rocehil::Error: bad input when an agent refuses a request (its message quoted),
// infrastructure when an agent dies or stays silent past the run's time and the timeout.
// `on_running` sees the seconds since the client started, about every 50 ms.
PerftestPairResult run_perftest_pair(remote::AgentLink& client, remote::AgentLink& server,
                                     const PerftestPairConfig& config,
                                     const std::function<void(double seconds)>& on_running,
                                     const std::atomic<bool>& interrupt);

// What went wrong, naming the side's host: the server's failure first (the client's then only
// follows from it), then the client's; nothing when both sides ran and the client reported.
struct PerftestFailure {
  std::string side;  // the agent link's name
  std::string message;
};
std::optional<PerftestFailure> perftest_failure(const PerftestPairResult& result);

// The case's metrics from the client's report: busbw_gbps and algbw_gbps (BW average), or
// lat_p50_us (t_typical), lat_p99_us, lat_max_us; and perftest's own fields as perftest_*.
// What perftest does not report (per-QP counters, the data check) is absent with the reason.
suites::Measured perftest_metrics(const PerftestPairResult& result);

}  // namespace rocehil::run
