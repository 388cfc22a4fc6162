#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>

#include "rocehil/channel/event_loop.hpp"
#include "rocehil/channel/tls_session.hpp"

namespace rocehil::channel {

// A listening TCP socket for agents to dial: `address` (IPv4) and `port` (0: one the kernel
// picks), non-blocking, close-on-exec. Returns the descriptor; `bound_port` the port it has.
// Throws rocehil::Error naming the address when it cannot listen there.
int listen_for_agents(const std::string& address, std::uint16_t port, std::uint16_t& bound_port);

// How much of the controller one peer may hold before it has proven it belongs to the run.
struct GateLimits {
  // A connection that has not finished the handshake by then is closed.
  std::chrono::milliseconds handshake_deadline{10'000};
  // Handshakes in progress from one address; more are refused at once, so a host that floods
  // the listener holds a bounded share of it and the other hosts still join.
  std::size_t per_address = 64;
  // Handshakes in progress in all.
  std::size_t total = 8192;
};

// A connection that completed the handshake: the peer holds the run's secret. The receiver owns
// `fd` and the session (which refers to the gate's TlsContext).
struct Joined {
  int fd = -1;
  std::unique_ptr<TlsSession> session;
  std::string peer;  // its address, as the controller saw it
};

// What the gate reports: each connection either joins or is refused with one line for the run's
// log (the address, and why).
class GateEvents {
 public:
  virtual ~GateEvents() = default;
  virtual void joined(Joined connection) = 0;
  virtual void refused(const std::string& peer, const std::string& why) = 0;
};

// Where agents dial in: accepts on the listening socket and runs each connection's TLS
// handshake in the event loop, within the deadline and the limits; nothing a peer sends before
// the handshake completes reaches anything else.
class AgentGate {
 public:
  AgentGate(EventLoop& loop, const TlsContext& context, int listen_fd, GateLimits limits,
            GateEvents& events);
  ~AgentGate();
  AgentGate(const AgentGate&) = delete;
  AgentGate& operator=(const AgentGate&) = delete;

  // Ends the handshakes past their deadline at `now`, and listens again after a pause for want
  // of descriptors once it is over; call it between the loop's turns.
  void expire(std::chrono::steady_clock::time_point now);

  // The process had no descriptor left for a connection: the listener is not watched until
  // expire() at or after this (a listener still readable would wake the loop at once, for
  // ever). Empty while listening.
  std::optional<std::chrono::steady_clock::time_point> accepting_paused_until() const {
    return paused_until_;
  }
  static constexpr std::chrono::milliseconds pause_without_descriptors{100};

  std::size_t handshakes_in_progress() const { return pending_.size(); }

 private:
  struct Pending {
    std::string peer;
    std::unique_ptr<TlsSession> session;
    std::chrono::steady_clock::time_point deadline;
  };
  void accept_ready();
  void advance(int fd);
  void end(int fd, const std::string* why);

  EventLoop& loop_;
  const TlsContext& context_;
  int listen_fd_;
  GateLimits limits_;
  GateEvents& events_;
  std::unordered_map<int, Pending> pending_;
  std::unordered_map<std::string, std::size_t> per_address_;
  std::optional<std::chrono::steady_clock::time_point> paused_until_;
};

}  // namespace rocehil::channel
