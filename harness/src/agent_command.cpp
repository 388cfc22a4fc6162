#include "rocehil/harness/agent_command.hpp"

#include <fmt/format.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <string_view>

#include "rocehil/common/error.hpp"
#include "rocehil/harness/agent_protocol.hpp"
#include "rocehil/harness/agent_session.hpp"

namespace rocehil::harness {

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

int poll_timeout_ms(AgentSession::Clock::time_point next) {
  if (next == AgentSession::Clock::time_point::max()) return 1000;
  const auto left =
      std::chrono::duration_cast<std::chrono::milliseconds>(next - AgentSession::Clock::now());
  return static_cast<int>(std::clamp<std::int64_t>(left.count() + 1, 0, 1000));
}

}  // namespace

int run_agent_stdio(int in_fd, int out_fd, const std::string& version) {
  // A controller that goes away must not kill the agent with SIGPIPE before it stops traffic.
  std::signal(SIGPIPE, SIG_IGN);
  bool out_open = true;
  AgentSession session(
      [&](const Reply& reply) {
        if (out_open) out_open = write_line(out_fd, to_json_line(reply) + "\n");
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
        ParsedRequest parsed = parse_request(line);
        if (parsed.request) {
          session.handle(*parsed.request);
        } else {
          const Reply reply{parsed.id, ErrorReply{std::move(parsed.error)}};
          if (out_open) out_open = write_line(out_fd, to_json_line(reply) + "\n");
        }
      }
      pending.erase(0, start);
      if (pending.size() > max_agent_line_bytes) {
        const Reply reply{std::nullopt,
                          ErrorReply{fmt::format("a request line is longer than {} bytes; it was "
                                                 "dropped (one JSON object per line)",
                                                 max_agent_line_bytes)}};
        if (out_open) out_open = write_line(out_fd, to_json_line(reply) + "\n");
        pending.clear();
        discarding = true;
      }
    }
    session.tick();
  }
  session.shutdown();
  return 0;
}

void add_agent_command(CLI::App& app, int& exit_code) {
  CLI::App* agent = app.add_subcommand(
      "agent",
      "Run traffic for a controller: JSON lines on stdin, replies on stdout (started over ssh by "
      "'rocehil run' and 'rocehil traffic client'; no port is opened).");
  agent->footer(R"(
Protocol (version 1), one JSON object per line; "id" is copied into the replies:
  {"v":1,"op":"hello","id":1}                      -> hello: version, providers, devices
  {"v":1,"op":"setup","id":2,"address":"198.18.1.11","workload":"bw","role":"server","qps":2}
                                                   -> setup: one endpoint per QP
  {"v":1,"op":"connect","id":3,"peers":[...]}      -> connected
  {"v":1,"op":"start","id":4,"seconds":5}          -> started, stats..., results
  {"v":1,"op":"stop","id":5}                       -> results
A bad line gets {"op":"error","error":"..."} and the agent reads on; when stdin closes it stops
its traffic and exits. Try it: printf '{"v":1,"op":"hello"}\n' | rocehil agent)");
  agent->callback([&exit_code] { exit_code = run_agent_stdio(0, 1, ROCEHIL_VERSION); });
}

}  // namespace rocehil::harness
