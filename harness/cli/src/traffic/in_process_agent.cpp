// An agent session in this process behind the link interface: 'traffic client' runs its own
// side this way, with no child process and no pipe.
#include "traffic/in_process_agent.hpp"

#include <poll.h>

#include <algorithm>
#include <deque>

#include "rocehil/agent/session.hpp"

namespace rocehil::cli {

namespace {

class InProcessAgent final : public remote::AgentLink {
 public:
  explicit InProcessAgent(std::string version)
      : session_([this](const agent::Reply& reply) { replies_.push_back(reply); },
                 std::move(version)) {}

  const std::string& name() const override { return name_; }

  void send(const agent::Request& request) override { session_.handle(request); }

  std::optional<agent::Reply> receive(Clock::time_point deadline) override {
    while (replies_.empty()) {
      const auto now = Clock::now();
      if (now >= deadline) return std::nullopt;
      const auto until = std::min(deadline, session_.next_tick());
      const auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(until - now);
      pollfd fd{session_.wake_fd(), POLLIN, 0};
      poll(&fd, 1, static_cast<int>(std::clamp<std::int64_t>(wait.count() + 1, 0, 100)));
      session_.tick();
    }
    agent::Reply reply = std::move(replies_.front());
    replies_.pop_front();
    return reply;
  }

 private:
  std::string name_ = "local";
  std::deque<agent::Reply> replies_;
  agent::AgentSession session_;  // after replies_: it emits into it until it is destroyed
};

}  // namespace

std::unique_ptr<remote::AgentLink> make_in_process_agent(std::string version) {
  return std::make_unique<InProcessAgent>(std::move(version));
}

}  // namespace rocehil::cli
