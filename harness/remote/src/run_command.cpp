// Runs a command to completion with a timeout: the second (and last) translation unit with
// Boost.Process, next to agent_process.cpp.
#include <fcntl.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/process/args.hpp>
#include <boost/process/child.hpp>
#include <boost/process/exe.hpp>
#include <boost/process/io.hpp>
#include <boost/process/pipe.hpp>
#include <boost/process/search_path.hpp>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <thread>

#include "rocehil/remote/run_command.hpp"

namespace bp = boost::process;

namespace rocehil::remote {

namespace {

using Clock = std::chrono::steady_clock;

void set_nonblocking_and_cloexec(int fd) {
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
  fcntl(fd, F_SETFD, FD_CLOEXEC);
}

// Reads what is there; returns false at EOF. stdout keeps its head (the answer comes first),
// stderr its tail (the reason for a failure comes last).
bool drain(int fd, std::string& into, std::size_t limit, bool keep_tail) {
  char chunk[16384];
  while (true) {
    const ssize_t n = read(fd, chunk, sizeof chunk);
    if (n == 0) return false;
    if (n < 0) return errno == EAGAIN || errno == EINTR;
    if (keep_tail) {
      into.append(chunk, static_cast<std::size_t>(n));
      if (into.size() > limit) into.erase(0, into.size() - limit);
    } else if (into.size() < limit) {
      into.append(chunk, std::min(static_cast<std::size_t>(n), limit - into.size()));
    }
  }
}

}  // namespace

std::string CommandResult::reason() const {
  if (!started) return start_error;
  if (timed_out) return "no answer within the timeout";
  std::string_view rest = err;
  while (!rest.empty()) {
    const auto nl = rest.find_last_of('\n', rest.size() - 1);
    std::string_view line = nl == std::string_view::npos ? rest : rest.substr(nl + 1);
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.remove_suffix(1);
    if (!line.empty()) return std::string(line);
    if (nl == std::string_view::npos) break;
    rest = rest.substr(0, nl);
  }
  return exit_code >= 0 ? "exit status " + std::to_string(exit_code) : "killed by a signal";
}

std::string CommandResult::ssh_reason() const {
  std::string why = reason();
  return why.starts_with("ssh:") ? why : "ssh: " + why;
}

CommandResult run_command(const std::vector<std::string>& argv, const RunOptions& options) {
  CommandResult result;
  if (argv.empty()) {
    result.start_error = "empty command";
    return result;
  }
  std::string exe = argv.front();
  if (exe.find('/') == std::string::npos) {
    const auto found = bp::search_path(exe);
    if (found.empty()) {
      result.start_error = "'" + exe + "' is not on PATH";
      return result;
    }
    exe = found.string();
  }
  const std::vector<std::string> args(argv.begin() + 1, argv.end());
  bp::pipe out, err;
  std::error_code ec;
  const auto start = Clock::now();
  // Files opened here so a missing or unwritable one is this function's answer, not a
  // half-started child's.
  using File = std::unique_ptr<std::FILE, int (*)(std::FILE*)>;
  File input(nullptr, &std::fclose), output(nullptr, &std::fclose);
  if (!options.stdin_file.empty()) {
    input.reset(std::fopen(options.stdin_file.c_str(), "rbe"));
    if (!input) {
      result.start_error = "cannot read " + options.stdin_file + ": " + std::strerror(errno);
      return result;
    }
  }
  if (!options.stdin_text.empty()) {
    // Small enough for the pipe's buffer: written whole before the child starts.
    int p[2];
    if (options.stdin_text.size() > 4096 || ::pipe2(p, O_CLOEXEC) != 0) {
      result.start_error = "cannot pass the command its input through a pipe";
      return result;
    }
    const bool written = ::write(p[1], options.stdin_text.data(), options.stdin_text.size()) ==
                         static_cast<ssize_t>(options.stdin_text.size());
    ::close(p[1]);
    input.reset(::fdopen(p[0], "rb"));
    if (!written || !input) {
      if (!input) ::close(p[0]);
      result.start_error = "cannot pass the command its input through a pipe";
      return result;
    }
  }
  if (!options.stdout_file.empty()) {
    output.reset(std::fopen(options.stdout_file.c_str(), "wbe"));
    if (!output) {
      result.start_error = "cannot write " + options.stdout_file + ": " + std::strerror(errno);
      return result;
    }
  }
  const auto spawn = [&](auto&& in, auto&& out_to) {
    return bp::child(bp::exe = exe, bp::args = args, bp::std_in<in, bp::std_out> out_to,
                     bp::std_err > err, ec);
  };
  bp::child child;
  if (input && output)
    child = spawn(input.get(), output.get());
  else if (input)
    child = spawn(input.get(), out);
  else if (output)
    child = spawn(bp::null, output.get());
  else
    child = spawn(bp::null, out);
  // The child has its own copies of the descriptors; closing ours lets EOF through.
  input.reset();
  output.reset();
  if (ec) {
    result.start_error = "cannot start '" + exe + "': " + ec.message();
    return result;
  }
  result.started = true;
  const int out_fd = out.native_source();
  const int err_fd = err.native_source();
  set_nonblocking_and_cloexec(out_fd);
  set_nonblocking_and_cloexec(err_fd);
  bool out_open = options.stdout_file.empty(), err_open = true;
  const auto deadline = start + options.timeout;
  while (out_open || err_open) {
    const auto now = Clock::now();
    if (now >= deadline) {
      result.timed_out = true;
      child.terminate(ec);
      break;
    }
    pollfd fds[2] = {{out_open ? out_fd : -1, POLLIN, 0}, {err_open ? err_fd : -1, POLLIN, 0}};
    const auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now);
    poll(fds, 2, static_cast<int>(std::min<std::int64_t>(wait.count() + 1, 200)));
    if (out_open) out_open = drain(out_fd, result.out, options.max_output, false);
    if (err_open) err_open = drain(err_fd, result.err, options.max_output, true);
  }
  // Both pipes closed; a command that keeps running without them still gets only the timeout.
  while (!result.timed_out && child.running(ec)) {
    if (Clock::now() >= deadline) {
      result.timed_out = true;
      child.terminate(ec);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  child.wait(ec);
  result.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  if (!result.timed_out) {
    // Boost reports a signal death as an exit code; only a normal exit counts as one.
    const int native = child.native_exit_code();
    result.exit_code = WIFEXITED(native) ? WEXITSTATUS(native) : -1;
  }
  return result;
}

}  // namespace rocehil::remote
