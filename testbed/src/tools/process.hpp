#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace rocehil::testbed {

// Runs the iproute2, tc, nft and OpenSSH tools that build the fabric. Plain posix_spawn:
// Boost.Process stays in the harness (design), and these are short, synchronous commands.

struct CommandResult {
  int exit_status = 0;  // the exit code, or 128 + signal
  std::string out;
  std::string err;
};

// Runs argv[0] (searched in PATH) with `input` on its stdin; waits for it. Throws rocehil::Error
// (infrastructure) only when it cannot be started.
CommandResult run(const std::vector<std::string>& argv, std::string_view input = {});

// As run(), but a non-zero exit throws rocehil::Error (infrastructure) naming `what`, the command
// and the first line the tool printed on stderr.
std::string run_checked(std::string_view what, const std::vector<std::string>& argv,
                        std::string_view input = {});

// Whether `pid` runs: a zombie has exited, only its parent's wait is missing (in a container
// nobody may reap it).
bool process_alive(int pid);

// The pid a daemon wrote to `pid_file` when that process runs and its command line (NULs read as
// spaces) holds every one of `names`; 0 otherwise (no file, no number, gone, or a pid the kernel
// has since given to another process).
int running_pid(const std::string& pid_file, const std::vector<std::string_view>& names);

// The full path of `tool` in PATH, or empty.
std::string find_in_path(std::string_view tool);

// Moves the calling thread (the process, before it starts any thread) into network namespace
// `netns` (rocehil-ID-NAME) and ahead of the hosts' senders in the queue for a CPU (nice -10,
// and, for a daemon, its session's scheduling group at -5; `log` says so when it cannot). For the
// testbed's own data-plane processes: a switch's forwarding or a guest's NIC is hardware, never
// short of time; here it shares the machine's cores with the hosts, and each millisecond it waits
// is line rate it did not pace or pause. Not real-time: a bug in a loop must not take the machine.
// Throws rocehil::Error naming `who`.
void enter_data_plane_namespace(const std::string& netns, std::string_view who,
                                const std::function<void(std::string_view)>& log);

// `word` in single quotes, each quote in it written '\'': one shell word whatever it holds.
std::string single_quoted(std::string_view word);

// The command line as a person would type it, for messages.
std::string shell_words(const std::vector<std::string>& argv);

}  // namespace rocehil::testbed
