#pragma once

#include <chrono>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace rocehil::remote {

// One command run to completion with its output collected: what preflight, deploy and discovery
// do over ssh. (Long-lived agents speak the protocol through AgentLink instead.)
struct CommandResult {
  bool started = false;
  std::string start_error;  // why it could not start (not on PATH, fork failed)
  bool timed_out = false;   // killed after the timeout
  int exit_code = -1;       // -1 when it did not exit normally
  std::string out;          // stdout, at most max_output bytes (the rest is dropped)
  std::string err;          // stderr, the last max_output bytes
  double seconds = 0;       // from start to exit
  bool succeeded() const { return started && !timed_out && exit_code == 0; }
  // The last non-empty line of stderr, or what went wrong starting it: ssh puts its reason there.
  std::string reason() const;
  // reason() of an ssh command, said as ssh's: "ssh: " before it unless ssh's own message
  // already starts so ("ssh: connect to host ..."), never "ssh: ssh: ...".
  std::string ssh_reason() const;
};

struct RunOptions {
  std::chrono::milliseconds timeout{30000};
  std::size_t max_output{std::size_t{1} << 20};
  std::string stdin_file{};  // sent to the command's stdin when set; otherwise stdin is empty
  // Sent to the command's stdin when set (not with stdin_file), through a pipe and never a file:
  // a run's secret for an agent its launcher starts. At most 4 KiB.
  std::string stdin_text{};
  // When set, stdout is written to this file (created or truncated) instead of `out`, whatever
  // its size: a file fetched from a host with `cat`.
  std::string stdout_file{};
};

// Runs argv (argv[0] searched on PATH when it has no '/'), never through a shell. Does not throw
// for a command that fails: the result says how.
CommandResult run_command(const std::vector<std::string>& argv, const RunOptions& options);

}  // namespace rocehil::remote
