// The agent's loop over its transport: requests in, replies out, the sessions ticking between.
#include <fmt/format.h>
#include <poll.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <map>
#include <memory>
#include <optional>
#include <string_view>
#include <variant>
#include <vector>

#include "rocehil/agent/agent_transport.hpp"
#include "rocehil/agent/protocol.hpp"
#include "rocehil/agent/session.hpp"
#include "rocehil/common/error.hpp"
#include "settings_task.hpp"

namespace rocehil::agent {

namespace {

int poll_timeout_ms(AgentSession::Clock::time_point next) {
  if (next == AgentSession::Clock::time_point::max()) return 1000;
  const auto left =
      std::chrono::duration_cast<std::chrono::milliseconds>(next - AgentSession::Clock::now());
  return static_cast<int>(std::clamp<std::int64_t>(left.count() + 1, 0, 1000));
}

// The sessions a controller has opened on this connection, each its own state machine whose
// replies carry its number.
class Sessions {
 public:
  Sessions(AgentTransport& transport, const std::string& version, const ServeOptions& options)
      : transport_(transport), version_(version), options_(options) {}

  // Until the controller goes, or refuses this agent.
  bool open() const { return out_open_ && !refused_; }

  void send(const Reply& reply) {
    if (out_open_) out_open_ = transport_.write_line(to_json_line(reply) + "\n");
  }

  void handle(const Request& request) {
    if (const auto* admission = std::get_if<AdmissionRequest>(&request.body)) {
      if (!options_.on_admission)
        return send(Reply{request.id,
                          ErrorReply{"admission: this agent did not dial its controller; it "
                                     "serves the controller on its stdio"},
                          request.session});
      refused_ = !admission->admitted;
      return options_.on_admission(*admission);
    }
    remember_settings(request);
    auto it = sessions_.find(request.session);
    if (it == sessions_.end()) {
      if (std::holds_alternative<EndRequest>(request.body))  // nothing to end: say so, idempotent
        return send(Reply{request.id, EndedReply{}, request.session});
      if (sessions_.size() >= max_agent_sessions)
        return send(Reply{request.id,
                          ErrorReply{fmt::format("this agent already serves {} sessions; end one "
                                                 "before opening session {}",
                                                 max_agent_sessions, request.session)},
                          request.session});
      const SessionId id = request.session;
      it = sessions_
               .emplace(id, std::make_unique<AgentSession>(
                                [this, id](const Reply& reply) {
                                  Reply stamped = reply;
                                  stamped.session = id;
                                  send(stamped);
                                },
                                version_, options_.host_name))
               .first;
    }
    it->second->handle(request);
    if (std::holds_alternative<EndRequest>(request.body)) sessions_.erase(it);
  }

  // The transport and every session's wake descriptor, the transport first.
  std::vector<pollfd>& poll_set() {
    fds_.assign(1, pollfd{transport_.poll_fd(), POLLIN, 0});
    for (const auto& [id, session] : sessions_) fds_.push_back({session->wake_fd(), POLLIN, 0});
    return fds_;
  }

  AgentSession::Clock::time_point next_tick() const {
    auto next = AgentSession::Clock::time_point::max();
    for (const auto& [id, session] : sessions_) next = std::min(next, session->next_tick());
    return next;
  }

  void tick() {
    for (const auto& [id, session] : sessions_) session->tick();
  }

  // The controller has gone: every session stops its traffic and releases what it holds.
  void shutdown() {
    for (const auto& [id, session] : sessions_) session->shutdown();
    sessions_.clear();
  }

  // Settings applied through this connection and not restored through it since: a restore of
  // them (host, provider and addresses as applied), or none.
  const std::optional<SettingsRequest>& settings_in_force() const { return applied_settings_; }

 private:
  void remember_settings(const Request& request) {
    const auto* settings = std::get_if<SettingsRequest>(&request.body);
    if (settings == nullptr) return;
    if (settings->action == SettingsAction::apply) {
      applied_settings_ = *settings;
      applied_settings_->action = SettingsAction::restore;
      applied_settings_->values.clear();
    } else if (settings->action == SettingsAction::restore) {
      applied_settings_.reset();
    }
  }

  AgentTransport& transport_;
  const std::string& version_;
  const ServeOptions& options_;
  bool out_open_ = true;
  bool refused_ = false;
  std::map<SessionId, std::unique_ptr<AgentSession>> sessions_;
  std::vector<pollfd> fds_;
  std::optional<SettingsRequest> applied_settings_;
};

}  // namespace

int serve_controller(AgentTransport& transport, const std::string& version,
                     const ServeOptions& options) {
  // A controller that goes away must not kill the agent with SIGPIPE before it stops traffic.
  std::signal(SIGPIPE, SIG_IGN);
  Sessions sessions(transport, version, options);

  std::string pending;
  bool discarding = false;  // inside a line that was too long: drop it up to its newline
  while (sessions.open()) {
    std::vector<pollfd>& fds = sessions.poll_set();
    const int ready =
        poll(fds.data(), static_cast<nfds_t>(fds.size()), poll_timeout_ms(sessions.next_tick()));
    if (ready < 0 && errno != EINTR) throw system_error("agent: poll", errno);
    if (ready > 0 && (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) != 0) {
      // The controller's last lines may come with its close (a refusal is sent, then the
      // connection closed): they are served before the agent stops and leaves.
      const bool open = transport.read_available(pending);
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
          sessions.handle(*parsed.request);
        else
          sessions.send(Reply{parsed.id, ErrorReply{std::move(parsed.error)}, parsed.session});
      }
      pending.erase(0, start);
      if (!open) break;  // the controller is gone: stop and leave
      if (pending.size() > max_agent_line_bytes) {
        sessions.send(
            Reply{std::nullopt, ErrorReply{fmt::format("a request line is longer than {} bytes; it "
                                                       "was dropped (one JSON object per line)",
                                                       max_agent_line_bytes)}});
        pending.clear();
        discarding = true;
      }
    }
    sessions.tick();
  }
  sessions.shutdown();
  if (options.put_back_settings_when_gone && sessions.settings_in_force()) {
    // Nobody is left to hear how it went: the journal stays when this fails, for the next run's
    // restore to find.
    try {
      (void)handle_settings(*sessions.settings_in_force(), host_settings_places());
    } catch (const std::exception&) {
      return static_cast<int>(ExitCode::infrastructure);
    }
  }
  return 0;
}

}  // namespace rocehil::agent
