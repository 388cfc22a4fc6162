// The in-process agent and the ssh command line; the process launcher is in agent_process.cpp.
#include <fmt/format.h>
#include <poll.h>

#include <algorithm>
#include <deque>

#include "rocehil/common/error.hpp"
#include "rocehil/harness/agent_link.hpp"
#include "rocehil/harness/agent_session.hpp"

namespace rocehil::harness {

namespace {

class InProcessAgent final : public AgentLink {
 public:
  explicit InProcessAgent(std::string version)
      : session_([this](const Reply& reply) { replies_.push_back(reply); }, std::move(version)) {}

  const std::string& name() const override { return name_; }

  void send(const Request& request) override { session_.handle(request); }

  std::optional<Reply> receive(Clock::time_point deadline) override {
    while (replies_.empty()) {
      const auto now = Clock::now();
      if (now >= deadline) return std::nullopt;
      const auto until = std::min(deadline, session_.next_tick());
      const auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(until - now);
      pollfd fd{session_.wake_fd(), POLLIN, 0};
      poll(&fd, 1, static_cast<int>(std::clamp<std::int64_t>(wait.count() + 1, 0, 100)));
      session_.tick();
    }
    Reply reply = std::move(replies_.front());
    replies_.pop_front();
    return reply;
  }

 private:
  std::string name_ = "local";
  std::deque<Reply> replies_;
  AgentSession session_;  // after replies_: it emits into it until it is destroyed
};

bool host_name_is_safe(const std::string& host) {
  if (host.empty() || host.front() == '-') return false;
  return std::none_of(host.begin(), host.end(),
                      [](char c) { return static_cast<unsigned char>(c) <= ' ' || c == 0x7f; });
}

}  // namespace

std::unique_ptr<AgentLink> make_in_process_agent(std::string version) {
  return std::make_unique<InProcessAgent>(std::move(version));
}

std::string shell_quote(std::string_view word) {
  std::string quoted = "'";
  for (const char c : word) {
    if (c == '\'')
      quoted += "'\\''";  // close, an escaped quote, reopen
    else
      quoted += c;
  }
  quoted += '\'';
  return quoted;
}

AgentCommand ssh_agent_command(const std::string& host, const SshOptions& ssh,
                               const std::vector<std::string>& remote_argv) {
  if (!host_name_is_safe(host))
    throw input_error(fmt::format(
        "ssh host '{}' is not a host name: it is empty, starts with '-' or contains whitespace "
        "or control characters",
        host));
  AgentCommand command{.name = host,
                       .argv = {"ssh", "-T", "-o", "BatchMode=yes", "-o",
                                fmt::format("ConnectTimeout={}", ssh.connect_timeout_s), "-o",
                                "ServerAliveInterval=5"}};
  auto& argv = command.argv;
  if (!ssh.config_file.empty()) argv.insert(argv.end(), {"-F", ssh.config_file});
  if (!ssh.user.empty()) argv.insert(argv.end(), {"-l", ssh.user});
  if (ssh.port != 0) argv.insert(argv.end(), {"-p", std::to_string(ssh.port)});
  if (!ssh.identity.empty()) argv.insert(argv.end(), {"-i", ssh.identity});
  argv.push_back(host);
  argv.push_back("--");
  std::string remote;
  for (const std::string& word : remote_argv) {
    if (!remote.empty()) remote += ' ';
    remote += shell_quote(word);
  }
  argv.push_back(remote);
  return command;
}

void close_all(std::vector<std::unique_ptr<AgentLink>>& links) {
  for (auto& link : links)
    if (link) link->close_input();
  links.clear();
}

}  // namespace rocehil::harness
