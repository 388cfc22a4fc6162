// An agent in a child process: the one translation unit with Boost.Process (it is slow to
// compile, and nothing else needs it).
#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <unistd.h>

#include <boost/process/args.hpp>
#include <boost/process/child.hpp>
#include <boost/process/exe.hpp>
#include <boost/process/io.hpp>
#include <boost/process/pipe.hpp>
#include <boost/process/search_path.hpp>
#include <cerrno>
#include <csignal>
#include <thread>

#include "rocehil/common/error.hpp"
#include "rocehil/remote/agent_link.hpp"

namespace bp = boost::process;

namespace rocehil::remote {

namespace {

constexpr std::size_t stderr_kept = 4096;

void set_nonblocking(int fd) {
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
}

class ProcessAgent final : public AgentLink {
 public:
  explicit ProcessAgent(const AgentCommand& command) : name_(command.name) {
    if (command.argv.empty()) throw input_error("agent command is empty");
    std::string exe = command.argv.front();
    if (exe.find('/') == std::string::npos) {
      const auto found = bp::search_path(exe);
      if (found.empty())
        throw Error(ExitCode::infrastructure,
                    fmt::format("{}: '{}' is not on PATH", name_, command.argv.front()));
      exe = found.string();
    }
    std::vector<std::string> args(command.argv.begin() + 1, command.argv.end());
    std::error_code ec;
    child_ =
        bp::child(bp::exe = exe, bp::args = args, bp::std_in<to_agent_, bp::std_out> from_agent_,
                  bp::std_err > agent_errors_, ec);
    if (ec)
      throw Error(ExitCode::infrastructure,
                  fmt::format("{}: cannot start '{}': {}", name_, exe, ec.message()));
    // Boost closed the child's ends here after the spawn. Ours must not leak into the next
    // agent started, or this agent would not see EOF when we close its stdin.
    for (const int fd :
         {to_agent_.native_sink(), from_agent_.native_source(), agent_errors_.native_source()})
      fcntl(fd, F_SETFD, FD_CLOEXEC);
    set_nonblocking(from_agent_.native_source());
    set_nonblocking(agent_errors_.native_source());
  }

  void close_input() override {
    if (to_agent_.native_sink() < 0) return;
    ::close(to_agent_.native_sink());
    to_agent_.assign_sink(-1);
  }

  ~ProcessAgent() override {
    // EOF on its stdin ends an agent (and ssh with it); give it a moment, then insist.
    close_input();
    const auto give_up = Clock::now() + std::chrono::seconds(5);
    std::error_code ec;
    while (child_.running(ec) && Clock::now() < give_up)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    // SIGTERM first: srun passes it to its step and ends it, where SIGKILL would leave the
    // agent running on its node until the allocation ends.
    if (child_.running(ec)) {
      ::kill(child_.id(), SIGTERM);
      const auto killed = Clock::now() + std::chrono::seconds(2);
      while (child_.running(ec) && Clock::now() < killed)
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    if (child_.running(ec)) child_.terminate(ec);
    if (child_.valid()) child_.wait(ec);
  }

  const std::string& name() const override { return name_; }

  void send(const agent::Request& request) override {
    write_raw(agent::to_json_line(request) + "\n");
  }

  void write_raw(std::string_view rest) {
    while (!rest.empty()) {
      const ssize_t n = write(to_agent_.native_sink(), rest.data(), rest.size());
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) throw gone("its stdin closed");
      rest.remove_prefix(static_cast<std::size_t>(n));
    }
  }

  std::optional<agent::Reply> receive(Clock::time_point deadline) override {
    // At least one look, even at a deadline already past: a caller checking on the agent
    // between other work (receive(now)) must see that it exited.
    for (bool looked = false;; looked = true) {
      if (const auto nl = buffer_.find('\n'); nl != std::string::npos) {
        const std::string line = buffer_.substr(0, nl);
        buffer_.erase(0, nl + 1);
        agent::ParsedReply parsed = agent::parse_reply(line);
        if (!parsed.reply)
          throw gone(fmt::format("it said something that is not the agent protocol ({}): {}",
                                 parsed.error, line.substr(0, 200)));
        return std::move(parsed.reply);
      }
      const auto now = Clock::now();
      if (now >= deadline && looked) return std::nullopt;
      const auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now);
      pollfd fds[2] = {{from_agent_.native_source(), POLLIN, 0},
                       {agent_errors_.native_source(), POLLIN, 0}};
      poll(fds, 2,
           now >= deadline ? 0 : static_cast<int>(std::min<std::int64_t>(wait.count() + 1, 100)));
      drain_stderr();
      char chunk[65536];
      const ssize_t n = read(from_agent_.native_source(), chunk, sizeof chunk);
      if (n > 0) buffer_.append(chunk, static_cast<std::size_t>(n));
      if (n == 0) {
        drain_stderr();
        throw gone("it exited");
      }
      if (buffer_.size() > 64 * agent::max_agent_line_bytes) throw gone("it sent an endless line");
    }
  }

 private:
  void drain_stderr() {
    char chunk[4096];
    ssize_t n;
    while ((n = read(agent_errors_.native_source(), chunk, sizeof chunk)) > 0) {
      errors_.append(chunk, static_cast<std::size_t>(n));
      if (errors_.size() > stderr_kept) errors_.erase(0, errors_.size() - stderr_kept);
    }
  }

  Error gone(const std::string& why) {
    std::error_code ec;
    std::string status;
    for (int i = 0; i < 50 && child_.running(ec); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    drain_stderr();
    if (!child_.running(ec)) status = fmt::format(" (exit status {})", child_.exit_code());
    std::string detail = errors_;
    while (!detail.empty() && (detail.back() == '\n' || detail.back() == '\r')) detail.pop_back();
    for (char& c : detail)
      if (c == '\n') c = ' ';
    return Error(ExitCode::infrastructure,
                 fmt::format("agent on {}: {}{}{}", name_, why, status,
                             detail.empty() ? "" : "; its stderr: " + detail));
  }

  std::string name_;
  bp::pipe to_agent_, from_agent_, agent_errors_;
  bp::child child_;
  std::string buffer_;
  std::string errors_;
};

}  // namespace

std::unique_ptr<AgentLink> launch_agent(const AgentCommand& command,
                                        const std::string& first_input) {
  auto agent = std::make_unique<ProcessAgent>(command);
  if (!first_input.empty()) agent->write_raw(first_input);
  return agent;
}

}  // namespace rocehil::remote
