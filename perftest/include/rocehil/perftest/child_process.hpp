#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rocehil::perftest {

// A perftest process on this host, started without a shell: execvp of the words, stdin from
// /dev/null, stdout and stderr each into a pipe the owner drains with poll(). The agent runs
// it in its own thread, so poll() blocks for at most the time it is given.
class ChildProcess {
 public:
  // Throws rocehil::Error (infrastructure) when the process cannot be started; a program that
  // is not installed is found out before, with find_on_path.
  explicit ChildProcess(const std::vector<std::string>& words);
  ~ChildProcess();  // a process still running is killed (SIGKILL) and reaped
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  // Reads what the process printed, waiting at most `wait` for output or its end. True once it
  // has exited and both pipes are drained; exit_code() is then valid.
  bool poll(std::chrono::milliseconds wait);
  // Sends a signal while it runs (SIGTERM to stop it, SIGKILL when it will not stop).
  void signal(int number);

  pid_t pid() const { return pid_; }
  const std::string& out() const { return out_; }
  const std::string& err() const { return err_; }
  // The exit status, or -N when signal N ended it.
  int exit_code() const { return exit_code_; }

 private:
  void drain(int& fd, std::string& into);
  void reap(bool block);

  pid_t pid_ = -1;
  int out_fd_ = -1, err_fd_ = -1;
  std::string out_, err_;
  bool exited_ = false;
  int exit_code_ = 0;
};

// The program's path on $PATH (as execvp would find it), or nothing.
std::optional<std::string> find_on_path(std::string_view program);

// An IPv4 TCP port nobody on this host holds now (the kernel's choice for a bind to port 0), for
// perftest's handshake. Another process could take it before perftest binds it; then perftest
// says so and the run fails with its words rather than hanging.
std::uint16_t free_tcp_port();

// Whether a socket listens on `port`, from the text of /proc/net/tcp (or tcp6): the row whose
// local address has that port and whose state is 0A (TCP_LISTEN).
bool listens_on(std::string_view proc_net_tcp, std::uint16_t port);
// The same for this host's network namespace now, from /proc/net/tcp and /proc/net/tcp6.
bool tcp_port_listening(std::uint16_t port);

}  // namespace rocehil::perftest
