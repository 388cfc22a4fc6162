#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "rocehil/agent/protocol.hpp"

namespace rocehil::remote {

// The controller's end of one agent: requests go in, replies come out. The agent is either in
// this process (cli's in_process_agent: the local side of 'traffic client') or a child process
// speaking JSON lines on its stdio: `rocehil agent` run directly, in a network namespace, or on
// another host over ssh.
class AgentLink {
 public:
  using Clock = std::chrono::steady_clock;
  virtual ~AgentLink() = default;
  virtual const std::string& name() const = 0;  // for messages: "local", "h2", "netns h2"
  // Throws rocehil::Error (infrastructure) when the agent has gone.
  virtual void send(const agent::Request& request) = 0;
  // The next reply, or nothing once `deadline` passes. Throws rocehil::Error (infrastructure)
  // when the agent has gone or said something that is not the protocol, with its stderr.
  virtual std::optional<agent::Reply> receive(Clock::time_point deadline) = 0;
  // Ends the agent's input (a process agent sees EOF and exits) without waiting for it; the
  // destructor then waits. Closing many links this way first lets them end together.
  virtual void close_input() {}
};

// Closes every link's input first, then destroys them: the agents end in parallel.
void close_all(std::vector<std::unique_ptr<AgentLink>>& links);

// How to start an agent process: argv[0] is looked up on PATH when it has no slash.
struct AgentCommand {
  std::string name;
  std::vector<std::string> argv;
};
// Starts it (Boost.Process); closing the link closes the agent's stdin, which ends it, and kills
// it if it has not exited a few seconds later. `first_input`, when given, is written to its stdin
// first (a run's secret for dialing agents a Slurm step starts).
std::unique_ptr<AgentLink> launch_agent(const AgentCommand& command,
                                        const std::string& first_input = {});

struct SshOptions {
  std::string config_file;  // ssh -F
  std::string user;         // ssh -l
  int port = 0;             // ssh -p; 0: ssh's default
  std::string identity;     // ssh -i
  int connect_timeout_s = 10;
};
// `ssh -T -o BatchMode=yes ... HOST -- 'arg0' 'arg1' ...`: the remote command is one string for
// the remote shell, so every word is quoted. Throws input_error for a host name ssh would read
// as an option or that contains whitespace or control characters.
AgentCommand ssh_agent_command(const std::string& host, const SshOptions& ssh,
                               const std::vector<std::string>& remote_argv);

// POSIX shell single quoting: the word comes out of the shell exactly as given.
std::string shell_quote(std::string_view word);

}  // namespace rocehil::remote
