#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>

#include "rocehil/channel/run_secret.hpp"

namespace rocehil::agent {

// Where an agent that dials home connects, and as what.
struct DialOptions {
  std::string address;  // the controller's IPv4 address
  std::uint16_t port = 0;
  std::string run_id;  // the run the agent belongs to (its key's identity; not secret)
  // The inventory's name for this host, which hello answers with (--as); empty: the host's own
  // name, which the controller maps to the inventory by name, else by the NICs' addresses.
  std::string host_name;
  // To connect and to complete the handshake, each.
  std::chrono::milliseconds deadline{10'000};
  // How long to keep trying while nobody listens yet (--wait): 0, once.
  std::chrono::milliseconds retry_for{0};
  // Called once the controller has admitted the agent (matched its hello to the inventory and
  // said so): it has joined.
  std::function<void()> on_joined{};
};

// The agent's end of its control connection: no Nagle delay for its lines, and TCP keepalive so
// that a controller gone without a word (its host down, the network cut) is noticed within about
// 25 s and the agent stops its traffic then, not never.
void configure_control_socket(int fd);

// "198.19.0.1:7000" -> address and port; throws rocehil::Error (bad input) naming the flag.
void parse_connect_address(const std::string& text, DialOptions& options);

// The run's secret for an agent: from ROCEHIL_RUN_SECRET when its launcher set it (which then
// leaves the environment), else the first line of `in_fd` (what an ssh launcher writes to the
// agent's stdin). Throws rocehil::Error (bad input) when neither holds one.
channel::RunSecret read_run_secret(int in_fd);

// `rocehil agent --connect`: connects to the controller, proves it holds the run's secret (and
// checks the controller does, over TLS 1.3: channel/tls_session.hpp), then serves it as over
// stdio until it goes; traffic is then stopped and what the session set is put back. Throws
// rocehil::Error (infrastructure) naming the address when it cannot connect or the handshake
// fails; returns the exit code otherwise.
int run_agent_dialing(const DialOptions& options, const channel::RunSecret& secret,
                      const std::string& version);

// `rocehil agent --connect ... --detach`, what a launcher runs: the agent goes on in the
// background (its own session, stdio on /dev/null, so ssh or pdsh returns), and this returns 0
// once it has joined its controller. Throws rocehil::Error (infrastructure) with the agent's
// reason when it could not join; nothing is left running then.
int start_detached_agent(const DialOptions& options, const channel::RunSecret& secret,
                         const std::string& version);

}  // namespace rocehil::agent
