#include "tools/process.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>

#include "rocehil/common/autogroup.hpp"
#include "rocehil/common/error.hpp"
#include "tools/files.hpp"

extern char** environ;

namespace rocehil::testbed {

namespace {

// A pipe whose ends close themselves.
struct Pipe {
  int fd[2] = {-1, -1};
  Pipe() {
    if (::pipe2(fd, O_CLOEXEC) != 0) throw system_error("pipe2", errno);
  }
  ~Pipe() {
    close_end(0);
    close_end(1);
  }
  Pipe(const Pipe&) = delete;
  Pipe& operator=(const Pipe&) = delete;
  void close_end(int e) {
    if (fd[e] >= 0) ::close(fd[e]);
    fd[e] = -1;
  }
};

// Feeds `input` and drains stdout and stderr together, so no pipe fills up and blocks the child.
void exchange(Pipe& in, Pipe& out, Pipe& err, std::string_view input, CommandResult& result) {
  std::size_t written = 0;
  if (input.empty()) in.close_end(1);
  std::array<char, 16384> buffer{};
  while (out.fd[0] >= 0 || err.fd[0] >= 0 || in.fd[1] >= 0) {
    std::array<pollfd, 3> fds{
        {{in.fd[1], POLLOUT, 0}, {out.fd[0], POLLIN, 0}, {err.fd[0], POLLIN, 0}}};
    if (::poll(fds.data(), fds.size(), -1) < 0) {
      if (errno == EINTR) continue;
      throw system_error("poll", errno);
    }
    if (fds[0].revents != 0) {
      const ssize_t n = ::write(in.fd[1], input.data() + written, input.size() - written);
      if (n > 0) written += static_cast<std::size_t>(n);
      const bool failed = n < 0 && errno != EAGAIN && errno != EINTR;  // EPIPE: it stopped reading
      if (failed || written == input.size()) in.close_end(1);
    }
    for (int k = 1; k <= 2; ++k) {
      if (fds[static_cast<std::size_t>(k)].revents == 0) continue;
      Pipe& p = k == 1 ? out : err;
      const ssize_t n = ::read(p.fd[0], buffer.data(), buffer.size());
      if (n > 0)
        (k == 1 ? result.out : result.err).append(buffer.data(), static_cast<std::size_t>(n));
      else if (n == 0 || (errno != EINTR && errno != EAGAIN))
        p.close_end(0);
    }
  }
}

}  // namespace

std::string shell_words(const std::vector<std::string>& argv) {
  std::string out;
  for (const auto& a : argv) {
    if (!out.empty()) out += ' ';
    const bool plain = !a.empty() && a.find_first_not_of(
                                         "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                         "0123456789-_./=:,@+") == std::string::npos;
    if (plain) {
      out += a;
      continue;
    }
    out += single_quoted(a);
  }
  return out;
}

std::string single_quoted(std::string_view word) {
  std::string out = "'";
  for (char c : word) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

int running_pid(const std::string& pid_file, const std::vector<std::string_view>& names) {
  const std::string text = read_file_or_empty(pid_file);
  int pid = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), pid);
  if (ec != std::errc() || pid <= 1 || !process_alive(pid)) return 0;
  std::string cmdline = read_file_or_empty(fmt::format("/proc/{}/cmdline", pid));
  for (char& c : cmdline)
    if (c == '\0') c = ' ';
  for (const std::string_view name : names)
    if (cmdline.find(name) == std::string::npos) return 0;
  return pid;
}

bool process_alive(int pid) {
  if (pid <= 0 || ::kill(pid, 0) != 0) return false;
  const std::string stat = read_file_or_empty(fmt::format("/proc/{}/stat", pid));
  const auto paren = stat.rfind(')');
  return paren == std::string::npos || paren + 2 >= stat.size() || stat[paren + 2] != 'Z';
}

std::string find_in_path(std::string_view tool) {
  const char* path = std::getenv("PATH");
  std::string_view rest = path != nullptr ? path : "";
  while (true) {
    const auto colon = rest.find(':');
    const std::string_view dir = rest.substr(0, colon);
    if (!dir.empty()) {
      std::string candidate = fmt::format("{}/{}", dir, tool);
      struct stat st {};
      if (::stat(candidate.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
          ::access(candidate.c_str(), X_OK) == 0)
        return candidate;
    }
    if (colon == std::string_view::npos) return {};
    rest.remove_prefix(colon + 1);
  }
}

CommandResult run(const std::vector<std::string>& argv, std::string_view input) {
  Pipe in, out, err;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in.fd[0], 0);
  posix_spawn_file_actions_adddup2(&actions, out.fd[1], 1);
  posix_spawn_file_actions_adddup2(&actions, err.fd[1], 2);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  const int rc = ::posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) throw system_error(fmt::format("cannot run '{}'", argv[0]), rc);
  in.close_end(0);
  out.close_end(1);
  err.close_end(1);
  // Our ends never block: a blocking write of a large input would wait for the child to read it
  // while the child waits for us to drain its output.
  for (int fd : {in.fd[1], out.fd[0], err.fd[0]})
    ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);

  CommandResult result;
  // A broken stdin pipe must not kill us: the child may exit without reading all of its input.
  struct sigaction ignore {
  }, previous{};
  ignore.sa_handler = SIG_IGN;
  ::sigaction(SIGPIPE, &ignore, &previous);
  try {
    exchange(in, out, err, input, result);
  } catch (...) {
    ::sigaction(SIGPIPE, &previous, nullptr);
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
    throw;
  }
  ::sigaction(SIGPIPE, &previous, nullptr);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  result.exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return result;
}

std::string run_checked(std::string_view what, const std::vector<std::string>& argv,
                        std::string_view input) {
  CommandResult r = run(argv, input);
  if (r.exit_status == 0) return std::move(r.out);
  std::string_view detail = r.err.empty() ? std::string_view(r.out) : std::string_view(r.err);
  // The batch tools say which line failed on the line after the error: keep two lines.
  std::string first_lines;
  for (int line = 0; line < 2 && !detail.empty(); ++line) {
    const auto nl = detail.find('\n');
    if (!first_lines.empty()) first_lines += "; ";
    first_lines += detail.substr(0, nl);
    if (nl == std::string_view::npos) break;
    detail.remove_prefix(nl + 1);
  }
  throw Error(ExitCode::infrastructure,
              fmt::format("{}: '{}' exited with {}: {}", what, shell_words(argv), r.exit_status,
                          first_lines.empty() ? "no message" : first_lines));
}

void enter_data_plane_namespace(const std::string& netns, std::string_view who,
                                const std::function<void(std::string_view)>& log) {
  const std::string path = "/run/netns/" + netns;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    throw system_error(fmt::format("{}: cannot open {} (is the testbed up?)", who, path), errno);
  const int entered = ::setns(fd, CLONE_NEWNET);
  const int why = errno;
  ::close(fd);
  if (entered != 0)
    throw system_error(fmt::format("{}: cannot enter network namespace {}", who, netns), why);
  if (::setpriority(PRIO_PROCESS, 0, -10) != 0)
    log(fmt::format("{}: cannot raise its priority (nice -10): {}", who, std::strerror(errno)));
  // A daemon (detach_daemon: setsid) is a scheduling group of its own, where its nice weighs
  // nothing against other sessions (rocehil/common/autogroup.hpp): without the group's nice,
  // the switches waited tens to hundreds of milliseconds for a CPU under the qualification
  // suite (486 ms once, past every headroom), and its first case failed 4 runs in 4. The
  // group's nice is -5, 3 to 1 over a session of nice 0: at -10 the hosts' soft NICs, the
  // senders' sessions, fell behind instead (thousands of receive buffer overflows). In the
  // foreground the group is the caller's, left as it is.
  if (::getsid(0) == ::getpid() && !set_session_group_nice(-5))
    log(fmt::format("{}: cannot raise its session's scheduling group (nice -5)", who));
}

}  // namespace rocehil::testbed
