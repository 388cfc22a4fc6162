// The agent's loop on a pipe pair: requests in, replies out, the session ticking between.
#include "rocehil/agent/stdio_loop.hpp"

#include <fmt/format.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <string_view>

#include "rocehil/agent/protocol.hpp"
#include "rocehil/agent/session.hpp"
#include "rocehil/common/error.hpp"

namespace rocehil::agent {

namespace {

// Writes a whole line; false once the controller has gone (EPIPE), so the agent winds down.
bool write_line(int fd, const std::string& line) {
  std::string_view rest = line;
  while (!rest.empty()) {
    const ssize_t n = write(fd, rest.data(), rest.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    rest.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

int poll_timeout_ms(agent::AgentSession::Clock::time_point next) {
  if (next == agent::AgentSession::Clock::time_point::max()) return 1000;
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      next - agent::AgentSession::Clock::now());
  return static_cast<int>(std::clamp<std::int64_t>(left.count() + 1, 0, 1000));
}

}  // namespace

int run_agent_stdio(int in_fd, int out_fd, const std::string& version) {
  // A controller that goes away must not kill the agent with SIGPIPE before it stops traffic.
  std::signal(SIGPIPE, SIG_IGN);
  bool out_open = true;
  agent::AgentSession session(
      [&](const agent::Reply& reply) {
        if (out_open) out_open = write_line(out_fd, agent::to_json_line(reply) + "\n");
      },
      version);

  std::string pending;
  bool discarding = false;  // inside a line that was too long: drop it up to its newline
  std::string chunk(65536, '\0');
  while (out_open) {
    pollfd fds[2] = {{in_fd, POLLIN, 0}, {session.wake_fd(), POLLIN, 0}};
    const int ready = poll(fds, 2, poll_timeout_ms(session.next_tick()));
    if (ready < 0 && errno != EINTR) throw system_error("agent: poll", errno);
    if (ready > 0 && (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) != 0) {
      const ssize_t n = read(in_fd, chunk.data(), chunk.size());
      if (n < 0 && errno != EINTR && errno != EAGAIN) break;
      if (n == 0) break;  // the controller is gone: stop traffic and leave
      if (n > 0) pending.append(chunk.data(), static_cast<std::size_t>(n));
      std::size_t start = 0;
      for (std::size_t nl; (nl = pending.find('\n', start)) != std::string::npos; start = nl + 1) {
        std::string_view line(pending.data() + start, nl - start);
        if (discarding) {
          discarding = false;
          continue;
        }
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        if (line.find_first_not_of(" \t") == std::string_view::npos) continue;
        agent::ParsedRequest parsed = agent::parse_request(line);
        if (parsed.request) {
          session.handle(*parsed.request);
        } else {
          const agent::Reply reply{parsed.id, agent::ErrorReply{std::move(parsed.error)}};
          if (out_open) out_open = write_line(out_fd, agent::to_json_line(reply) + "\n");
        }
      }
      pending.erase(0, start);
      if (pending.size() > agent::max_agent_line_bytes) {
        const agent::Reply reply{std::nullopt, agent::ErrorReply{fmt::format(
                                                   "a request line is longer than {} bytes; it was "
                                                   "dropped (one JSON object per line)",
                                                   agent::max_agent_line_bytes)}};
        if (out_open) out_open = write_line(out_fd, agent::to_json_line(reply) + "\n");
        pending.clear();
        discarding = true;
      }
    }
    session.tick();
  }
  session.shutdown();
  return 0;
}

}  // namespace rocehil::agent
