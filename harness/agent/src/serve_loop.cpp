// The agent's loop over its transport: requests in, replies out, the session ticking between.
#include <fmt/format.h>
#include <poll.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <string_view>

#include "rocehil/agent/agent_transport.hpp"
#include "rocehil/agent/protocol.hpp"
#include "rocehil/agent/session.hpp"
#include "rocehil/common/error.hpp"

namespace rocehil::agent {

namespace {

int poll_timeout_ms(AgentSession::Clock::time_point next) {
  if (next == AgentSession::Clock::time_point::max()) return 1000;
  const auto left =
      std::chrono::duration_cast<std::chrono::milliseconds>(next - AgentSession::Clock::now());
  return static_cast<int>(std::clamp<std::int64_t>(left.count() + 1, 0, 1000));
}

}  // namespace

int serve_controller(AgentTransport& transport, const std::string& version) {
  // A controller that goes away must not kill the agent with SIGPIPE before it stops traffic.
  std::signal(SIGPIPE, SIG_IGN);
  bool out_open = true;
  const auto send = [&](const Reply& reply) {
    if (out_open) out_open = transport.write_line(to_json_line(reply) + "\n");
  };
  AgentSession session(send, version);

  std::string pending;
  bool discarding = false;  // inside a line that was too long: drop it up to its newline
  while (out_open) {
    pollfd fds[2] = {{transport.poll_fd(), POLLIN, 0}, {session.wake_fd(), POLLIN, 0}};
    const int ready = poll(fds, 2, poll_timeout_ms(session.next_tick()));
    if (ready < 0 && errno != EINTR) throw system_error("agent: poll", errno);
    if (ready > 0 && (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) != 0) {
      if (!transport.read_available(pending)) break;  // the controller is gone: stop and leave
      std::size_t start = 0;
      for (std::size_t nl; (nl = pending.find('\n', start)) != std::string::npos; start = nl + 1) {
        std::string_view line(pending.data() + start, nl - start);
        if (discarding) {
          discarding = false;
          continue;
        }
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        if (line.find_first_not_of(" \t") == std::string_view::npos) continue;
        ParsedRequest parsed = parse_request(line);
        if (parsed.request)
          session.handle(*parsed.request);
        else
          send(Reply{parsed.id, ErrorReply{std::move(parsed.error)}});
      }
      pending.erase(0, start);
      if (pending.size() > max_agent_line_bytes) {
        send(Reply{std::nullopt,
                   ErrorReply{fmt::format("a request line is longer than {} bytes; it was "
                                          "dropped (one JSON object per line)",
                                          max_agent_line_bytes)}});
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
