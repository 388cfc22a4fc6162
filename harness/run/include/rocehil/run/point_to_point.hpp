#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "rocehil/agent/protocol.hpp"
#include "rocehil/remote/agent_link.hpp"

namespace rocehil::run {

// One point-to-point test between two agents, as 'rocehil traffic client' runs it: hello, setup,
// exchange endpoints, start both at one wall-clock time, follow the stats, collect results, stop,
// and check that the bytes that left one side are the bytes that arrived on the other.

struct PointToPointConfig {
  agent::SetupRequest client;  // role client
  agent::SetupRequest server;  // role server (client too when bidirectional)
  agent::StartRequest start;
  std::chrono::milliseconds start_delay{500};  // from the start request to the agreed time
  std::chrono::seconds reply_timeout{30};      // for each setup step, and for silence in a run
  // Told the agreed wall-clock start (Unix ns) before either side is asked to start.
  std::function<void(std::int64_t at_ns)> on_start = {};
  // In a case with parts: the start, proposed as now + start_delay, becomes the time the case's
  // parts agreed on (CollectiveJob::agree_start).
  std::function<std::int64_t(std::int64_t proposed_ns)> agree_start = {};
};

struct SideReport {
  std::string name;
  agent::HelloReply hello;
  agent::ResultsEvent results;
};

struct DataCheck {
  bool checked = false;         // false when a side had no host-memory checksums (GPU memory)
  std::uint32_t transfers = 0;  // QP directions compared
  std::uint32_t intact = 0;
  std::vector<std::string> problems;  // "QP 0x12 -> 0x40: sent crc 0x.. but 0x.. arrived"
};

struct PointToPointResult {
  SideReport client, server;
  DataCheck data;
  bool interrupted = false;
};

// Throws rocehil::Error: bad_input when an agent refuses a request (its message quoted),
// infrastructure when an agent dies or stays silent past the timeout. `on_stats` sees the client's
// stats events; `interrupt` (Ctrl-C) stops both sides early and still returns their results.
PointToPointResult run_point_to_point(remote::AgentLink& client, remote::AgentLink& server,
                                      const PointToPointConfig& config,
                                      const std::function<void(const agent::StatsEvent&)>& on_stats,
                                      const std::atomic<bool>& interrupt);

// The check on its own, for tests: per QP pair, what the sender's source half held equals what
// arrived in the receiver's target half, in each direction that carried data.
DataCheck check_data(const agent::ResultsEvent& client, const agent::ResultsEvent& server,
                     bool both_directions);

}  // namespace rocehil::run
