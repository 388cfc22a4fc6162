#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "rocehil/agent/protocol.hpp"
#include "rocehil/channel/agent_gate.hpp"
#include "rocehil/channel/run_secret.hpp"
#include "rocehil/remote/agent_identity.hpp"
#include "rocehil/remote/agent_link.hpp"

namespace rocehil::remote {

// What happens to the run's agents, for its log: each line names the host or the address.
class DialedAgentsEvents {
 public:
  virtual ~DialedAgentsEvents() = default;
  virtual void agent_joined(const std::string& host, const std::string& peer) = 0;
  // A connection that is not one of the run's agents, or one too many: it is closed.
  virtual void agent_refused(const std::string& peer, const std::string& why) = 0;
  // A joined agent's connection ended (its host went down, it was killed, the network cut).
  virtual void agent_lost(const std::string& host, const std::string& why) = 0;
};

struct DialedAgentsOptions {
  std::string listen_address = "0.0.0.0";  // where agents dial (IPv4)
  std::uint16_t port = 0;                  // 0: one the kernel picks
  channel::GateLimits limits{};
  // After its handshake an agent has this long to answer hello.
  std::chrono::milliseconds hello_deadline{10'000};
};

// The controller's end of every agent that dialed in to this run, on one event loop in the
// caller's thread: no thread or process per agent. Each agent proves the run's secret (the
// gate), says hello, and is mapped to an inventory host (identify_agent); an agent claiming a
// host already joined, or none, is refused with one line and the run goes on. Each host's one
// connection then carries a session per rank or capture: open_session() hands one out as an
// AgentLink, whose receive() turns the loop for everyone.
class DialedAgents {
 public:
  using Clock = std::chrono::steady_clock;

  // Listens at once; throws rocehil::Error when it cannot.
  DialedAgents(const channel::RunSecret& secret, const std::string& run_id,
               std::vector<ExpectedHost> expected, const DialedAgentsOptions& options,
               DialedAgentsEvents& events);
  ~DialedAgents();  // closes every connection: the agents stop and exit
  DialedAgents(const DialedAgents&) = delete;
  DialedAgents& operator=(const DialedAgents&) = delete;

  std::uint16_t port() const;

  // Turns the loop until every expected host has joined, `deadline` passes or `interrupt` is
  // set; `progress` hears each new count of joined hosts. Returns the hosts that have not
  // joined, in the order expected.
  std::vector<std::string> await_all(Clock::time_point deadline,
                                     const std::atomic<bool>* interrupt = nullptr,
                                     const std::function<void(std::size_t)>& progress = {});
  // One turn of the loop: waits up to `timeout` for any connection.
  void turn(std::chrono::milliseconds timeout);

  std::size_t joined_count() const;
  // The host's hello, or nullptr when it has not joined (or its connection has ended).
  const agent::HelloReply* hello(const std::string& host) const;

  // A new session on the host's agent; `name` is the link's for messages ("h3", "h3/eth1").
  // Closing or destroying the link ends the session in the agent ("end"), which releases what
  // the session held before anything sent after it. Throws rocehil::Error (infrastructure) when
  // the host has not joined or its connection has ended.
  std::unique_ptr<AgentLink> open_session(const std::string& host, std::string name);

  struct Impl;  // dialed_agents.cpp: the loop, the gate, the connections

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace rocehil::remote
