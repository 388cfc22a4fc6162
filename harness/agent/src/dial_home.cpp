// The agent that dials its controller: a TCP connection, TLS on the run's secret, and then the
// same protocol loop as on stdio.
#include "rocehil/agent/dial_home.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <optional>
#include <thread>

#include "rocehil/agent/agent_transport.hpp"
#include "rocehil/channel/tls_session.hpp"
#include "rocehil/common/error.hpp"

namespace rocehil::agent {

namespace {

using Clock = std::chrono::steady_clock;

int left_ms(Clock::time_point deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
  return static_cast<int>(std::max<std::int64_t>(0, left.count()));
}

// Waits until `fd` is ready as a TLS step asks, or the deadline; false at the deadline.
bool wait_for(int fd, channel::Step step, Clock::time_point deadline) {
  pollfd p{fd, static_cast<short>(step == channel::Step::want_write ? POLLOUT : POLLIN), 0};
  return poll(&p, 1, left_ms(deadline)) > 0;
}

class Socket {
 public:
  explicit Socket(int fd) : fd_(fd) {}
  ~Socket() {
    if (fd_ >= 0) ::close(fd_);
  }
  Socket(const Socket&) = delete;
  Socket& operator=(const Socket&) = delete;
  int fd() const { return fd_; }

 private:
  int fd_;
};

// One attempt to connect; 0 and the descriptor, or the errno of why not.
int connect_once(const DialOptions& o, Clock::time_point deadline, int& fd_out) {
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(o.port);
  if (::inet_pton(AF_INET, o.address.c_str(), &sa.sin_addr) != 1)
    throw input_error(fmt::format("--connect: '{}' is not an IPv4 address", o.address));
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) throw system_error("agent: a socket to dial the controller", errno);
  configure_control_socket(fd);
  int err = 0;
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&sa), sizeof sa) != 0) {
    err = errno;
    if (err == EINPROGRESS) {
      pollfd p{fd, POLLOUT, 0};
      if (poll(&p, 1, left_ms(deadline)) <= 0) {
        err = ETIMEDOUT;
      } else {
        socklen_t len = sizeof err;
        ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
      }
    }
  }
  if (err != 0) {
    ::close(fd);
    return err;
  }
  fd_out = fd;
  return 0;
}

// Connects by the deadline; a controller not listening yet (refused, unreachable) is tried
// again every 200 ms for `o.retry_for`: agents others start may come up before the run.
int connect_within(const DialOptions& o, Clock::time_point deadline) {
  const auto retry_until = Clock::now() + o.retry_for;
  int fd = -1;
  int err = connect_once(o, deadline, fd);
  while (err != 0 && err != ETIMEDOUT &&
         Clock::now() + std::chrono::milliseconds(200) < retry_until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    err = connect_once(o, std::max(deadline, Clock::now() + std::chrono::seconds(5)), fd);
  }
  if (err != 0)
    throw Error(ExitCode::infrastructure,
                fmt::format("agent: cannot reach the controller at {}:{}: {}; is 'rocehil run' "
                            "listening there, and does the inventory's controller address reach "
                            "it from this host?",
                            o.address, o.port, std::strerror(err)),
                err);
  return fd;
}

class TlsTransport final : public AgentTransport {
 public:
  TlsTransport(int fd, channel::TlsSession& session) : fd_(fd), session_(session) {}
  int poll_fd() const override { return fd_; }

  // Everything TLS has for us now: it may hold decrypted records beyond what one read takes.
  bool read_available(std::string& out) override {
    // A chunk holds a whole TLS record, so nothing is left decrypted inside OpenSSL when this
    // returns and poll() wakes for the rest. At most a few records per call: a controller that
    // streams without a newline must meet the line limit, not grow this agent without bound.
    char chunk[16384];
    for (int records = 0; records < 4; ++records) {
      const channel::Transfer t = session_.read(chunk);
      out.append(chunk, t.bytes);
      if (t.closed || t.step == channel::Step::failed) return false;
      if (t.bytes == 0) return true;  // wants the socket readable again
    }
    return true;
  }

  bool write_line(const std::string& line) override {
    std::string_view rest = line;
    while (!rest.empty()) {
      const channel::Transfer t = session_.write(rest);
      if (t.step == channel::Step::failed || t.closed) return false;
      rest.remove_prefix(t.bytes);
      // A full socket: the controller reads everyone's lines in one loop; give it a while.
      if (t.bytes == 0 && !wait_for(fd_, t.step, Clock::now() + std::chrono::seconds(30)))
        return false;
    }
    return true;
  }

 private:
  int fd_;
  channel::TlsSession& session_;
};

}  // namespace

void configure_control_socket(int fd) {
  const int on = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);  // lines, not bulk
  // A controller whose host dies or is cut off sends no FIN; keepalive probes find it gone
  // (10 s idle, then 3 probes 5 s apart), the loop reads an error, and the agent stops.
  const int idle_s = 10, interval_s = 5, probes = 3;
  ::setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &on, sizeof on);
  ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle_s, sizeof idle_s);
  ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &interval_s, sizeof interval_s);
  ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &probes, sizeof probes);
}

void parse_connect_address(const std::string& text, DialOptions& options) {
  const std::size_t colon = text.rfind(':');
  unsigned port = 0;
  const char* end = text.data() + text.size();
  if (colon == std::string::npos || colon == 0 ||
      std::from_chars(text.data() + colon + 1, end, port).ptr != end || port == 0 || port > 65535)
    throw input_error(fmt::format(
        "--connect '{}': give the controller as ADDRESS:PORT (198.19.0.1:7000), as 'rocehil run' "
        "hands it to its agents",
        text));
  options.address = text.substr(0, colon);
  options.port = static_cast<std::uint16_t>(port);
}

channel::RunSecret read_run_secret(int in_fd) {
  if (auto secret = channel::take_secret_from_environment()) return *secret;
  // One line, read a byte at a time: what follows it on stdin is not ours to consume.
  std::string line;
  char c = 0;
  while (line.size() <= 2 * channel::RunSecret::bytes && ::read(in_fd, &c, 1) == 1 && c != '\n')
    line += c;
  auto secret = channel::RunSecret::parse(line);
  std::fill(line.begin(), line.end(), '\0');
  if (!secret)
    throw input_error(
        "agent --connect: no run secret (ROCEHIL_RUN_SECRET unset, and stdin's first line is not "
        "one); start dialing agents from 'rocehil run', which hands each its run's secret");
  return *secret;
}

int run_agent_dialing(const DialOptions& options, const channel::RunSecret& secret,
                      const std::string& version) {
  const Socket socket(connect_within(options, Clock::now() + options.deadline));
  const Clock::time_point deadline = Clock::now() + options.deadline;
  const channel::TlsContext context(channel::Side::agent, secret, options.run_id);
  channel::TlsSession session(context, socket.fd());
  for (channel::Step step = session.handshake(); step != channel::Step::done;
       step = session.handshake()) {
    if (step == channel::Step::failed || !wait_for(socket.fd(), step, deadline))
      throw Error(ExitCode::infrastructure,
                  fmt::format("agent: the controller at {}:{} {}", options.address, options.port,
                              step == channel::Step::failed
                                  ? "refused it: " + session.failure()
                                  : std::string("did not complete the handshake in time")));
  }
  // Joined once the controller has matched the hello to its inventory and said so: a
  // connection it closes before that, or its refusal, is this agent's failure to join.
  std::optional<std::string> refused;
  bool admitted = false;
  ServeOptions serve{.host_name = options.host_name,
                     .put_back_settings_when_gone = true,
                     .on_admission = [&](const AdmissionRequest& a) {
                       if (!a.admitted) {
                         refused = a.why;
                       } else if (!admitted) {
                         admitted = true;
                         if (options.on_joined) options.on_joined();
                       }
                     }};
  TlsTransport transport(socket.fd(), session);
  const int code = serve_controller(transport, version, serve);
  if (refused)
    throw Error(ExitCode::infrastructure,
                fmt::format("agent: the controller at {}:{} refused it: {}", options.address,
                            options.port, *refused));
  if (!admitted)
    throw Error(ExitCode::infrastructure,
                fmt::format("agent: the controller at {}:{} closed the connection before "
                            "admitting it (the controller's output says why)",
                            options.address, options.port));
  return code;
}

int start_detached_agent(const DialOptions& options, const channel::RunSecret& secret,
                         const std::string& version) {
  int ready[2];
  if (::pipe2(ready, O_CLOEXEC) != 0) throw system_error("agent: pipe", errno);
  const pid_t pid = ::fork();
  if (pid < 0) {
    const int err = errno;
    ::close(ready[0]);
    ::close(ready[1]);
    throw system_error("agent: fork", err);
  }
  if (pid == 0) {
    // The agent: its own session, so the launcher's hangup does not reach it, and no descriptor
    // of the launcher's (ssh waits for its pipes to close).
    ::close(ready[0]);
    ::setsid();
    const int null = ::open("/dev/null", O_RDWR | O_CLOEXEC);
    for (int fd = 0; fd <= 2; ++fd) ::dup2(null, fd);
    // Nor any other: a launcher that started several agents at once from its threads (the
    // local launcher) had each inherit the others' output pipes, and waited for them to close
    // until its timeout, with every agent joined.
    if (ready[1] > 3) ::close_range(3, static_cast<unsigned>(ready[1]) - 1, 0);
    ::close_range(static_cast<unsigned>(ready[1]) + 1, ~0u, 0);
    int code = 3;
    int tell = ready[1];
    const auto say = [&tell](const std::string& line) {
      if (tell < 0) return;
      [[maybe_unused]] const ssize_t n = ::write(tell, line.data(), line.size());
      ::close(tell);
      tell = -1;
    };
    try {
      DialOptions joined = options;
      joined.on_joined = [&say] { say("joined\n"); };
      code = run_agent_dialing(joined, secret, version);
    } catch (const std::exception& e) {
      say(std::string(e.what()) + "\n");
    }
    ::_exit(code);
  }
  ::close(ready[1]);
  std::string said;
  char chunk[512];
  for (ssize_t n; (n = ::read(ready[0], chunk, sizeof chunk)) != 0;) {
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;
    said.append(chunk, static_cast<std::size_t>(n));
  }
  ::close(ready[0]);
  if (said == "joined\n") return 0;
  int status = 0;
  ::waitpid(pid, &status, 0);  // it has given up: collect it
  while (!said.empty() && said.back() == '\n') said.pop_back();
  throw Error(ExitCode::infrastructure,
              said.empty() ? std::string("agent: it ended before joining its controller") : said);
}

}  // namespace rocehil::agent
