#include "rocehil/perftest/child_process.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "rocehil/common/error.hpp"

extern char** environ;

namespace rocehil::perftest {

namespace {

// perftest prints a few KiB; more than this is kept from its start (the banner and the table),
// so a program gone wrong cannot fill the agent's memory.
constexpr std::size_t max_stream_bytes = std::size_t{1} << 20;

void close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

}  // namespace

ChildProcess::ChildProcess(const std::vector<std::string>& words) {
  if (words.empty()) throw input_error("perftest: an empty command");
  int out_pipe[2] = {-1, -1}, err_pipe[2] = {-1, -1};
  if (pipe2(out_pipe, O_CLOEXEC) != 0) throw system_error("perftest: pipe", errno);
  if (pipe2(err_pipe, O_CLOEXEC) != 0) {
    const int saved = errno;
    ::close(out_pipe[0]);
    ::close(out_pipe[1]);
    throw system_error("perftest: pipe", saved);
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, out_pipe[1], 1);
  posix_spawn_file_actions_adddup2(&actions, err_pipe[1], 2);
  // The agent's own signal dispositions and mask must not reach perftest: it has to die on
  // SIGTERM even when the agent blocks or ignores it.
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  sigset_t none, all;
  sigemptyset(&none);
  sigfillset(&all);
  posix_spawnattr_setsigmask(&attributes, &none);
  posix_spawnattr_setsigdefault(&attributes, &all);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);

  std::vector<char*> argv;
  for (const std::string& w : words) argv.push_back(const_cast<char*>(w.c_str()));
  argv.push_back(nullptr);
  const int rc = posix_spawnp(&pid_, argv[0], &actions, &attributes, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);
  ::close(out_pipe[1]);
  ::close(err_pipe[1]);
  out_fd_ = out_pipe[0];
  err_fd_ = err_pipe[0];
  if (rc != 0) {
    close_fd(out_fd_);
    close_fd(err_fd_);
    pid_ = -1;
    throw system_error(fmt::format("perftest: cannot start '{}'", words.front()), rc);
  }
}

ChildProcess::~ChildProcess() {
  if (pid_ > 0 && !exited_) {
    ::kill(pid_, SIGKILL);
    reap(true);
  }
  close_fd(out_fd_);
  close_fd(err_fd_);
}

void ChildProcess::drain(int& fd, std::string& into) {
  char buffer[4096];
  const ssize_t n = ::read(fd, buffer, sizeof buffer);
  if (n > 0) {
    const auto room = max_stream_bytes - std::min(max_stream_bytes, into.size());
    into.append(buffer, std::min(static_cast<std::size_t>(n), room));
  } else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
    close_fd(fd);  // the end of the stream (or an error: nothing more will come)
  }
}

void ChildProcess::reap(bool block) {
  if (exited_ || pid_ <= 0) return;
  int status = 0;
  pid_t r;
  do {
    r = ::waitpid(pid_, &status, block ? 0 : WNOHANG);
  } while (r < 0 && errno == EINTR);
  if (r != pid_) return;
  exited_ = true;
  exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
}

bool ChildProcess::poll(std::chrono::milliseconds wait) {
  if (out_fd_ >= 0 || err_fd_ >= 0) {
    pollfd fds[2] = {{out_fd_, POLLIN, 0}, {err_fd_, POLLIN, 0}};
    const int n = ::poll(fds, 2, static_cast<int>(wait.count()));
    if (n > 0) {
      if (fds[0].revents != 0) drain(out_fd_, out_);
      if (fds[1].revents != 0) drain(err_fd_, err_);
    }
  } else if (!exited_) {
    // Both pipes closed (the program closed them, or a child of it holds none): wait for the
    // exit itself, a little at a time so a stop is still seen.
    const auto step = std::min(wait, std::chrono::milliseconds(20));
    ::usleep(static_cast<useconds_t>(step.count() * 1000));
  }
  reap(false);
  return exited_ && out_fd_ < 0 && err_fd_ < 0;
}

void ChildProcess::signal(int number) {
  if (pid_ > 0 && !exited_) ::kill(pid_, number);
}

std::optional<std::string> find_on_path(std::string_view program) {
  if (program.empty()) return std::nullopt;
  const auto runnable = [](const std::string& path) {
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
           ::access(path.c_str(), X_OK) == 0;
  };
  if (program.find('/') != std::string_view::npos) {
    std::string path(program);
    return runnable(path) ? std::optional(path) : std::nullopt;
  }
  const char* env = std::getenv("PATH");
  std::string_view dirs = env != nullptr ? env : "/usr/local/bin:/usr/bin:/bin";
  while (true) {
    const auto colon = dirs.find(':');
    const std::string_view dir = dirs.substr(0, colon);
    std::string path = fmt::format("{}/{}", dir.empty() ? "." : dir, program);
    if (runnable(path)) return path;
    if (colon == std::string_view::npos) return std::nullopt;
    dirs.remove_prefix(colon + 1);
  }
}

std::uint16_t free_tcp_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) throw system_error("perftest: socket for a free TCP port", errno);
  sockaddr_in any{};
  any.sin_family = AF_INET;
  any.sin_addr.s_addr = htonl(INADDR_ANY);
  socklen_t length = sizeof any;
  const bool ok = ::bind(fd, reinterpret_cast<sockaddr*>(&any), sizeof any) == 0 &&
                  ::getsockname(fd, reinterpret_cast<sockaddr*>(&any), &length) == 0;
  const int saved = errno;
  ::close(fd);
  if (!ok) throw system_error("perftest: finding a free TCP port", saved);
  return ntohs(any.sin_port);
}

bool listens_on(std::string_view table, std::uint16_t port) {
  constexpr std::string_view listen_state = "0A";
  std::size_t start = table.find('\n');  // the header line names the columns
  while (start != std::string_view::npos && start < table.size()) {
    const std::size_t end = table.find('\n', start + 1);
    std::string_view line = table.substr(
        start + 1, end == std::string_view::npos ? std::string_view::npos : end - start - 1);
    start = end;
    // "  0: 00000000:07E8 00000000:0000 0A ...": slot, local, remote, state.
    std::istringstream fields{std::string(line)};
    std::string slot, local, remote, state;
    if (!(fields >> slot >> local >> remote >> state)) continue;
    const auto colon = local.rfind(':');
    if (colon == std::string::npos || state != listen_state) continue;
    unsigned value = 0;
    const char* first = local.data() + colon + 1;
    const char* last = local.data() + local.size();
    const auto [ptr, ec] = std::from_chars(first, last, value, 16);
    if (ec == std::errc{} && ptr == last && value == port) return true;
  }
  return false;
}

bool tcp_port_listening(std::uint16_t port) {
  for (const char* path : {"/proc/net/tcp", "/proc/net/tcp6"}) {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    if (listens_on(text.str(), port)) return true;
  }
  return false;
}

}  // namespace rocehil::perftest
