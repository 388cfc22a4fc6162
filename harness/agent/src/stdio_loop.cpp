// The agent on a pipe pair: what ssh and a Slurm step give it.
#include "rocehil/agent/stdio_loop.hpp"

#include <unistd.h>

#include <cerrno>
#include <string_view>

#include "rocehil/agent/agent_transport.hpp"

namespace rocehil::agent {

namespace {

class StdioTransport final : public AgentTransport {
 public:
  StdioTransport(int in_fd, int out_fd) : in_fd_(in_fd), out_fd_(out_fd) {}
  int poll_fd() const override { return in_fd_; }

  bool read_available(std::string& out) override {
    char chunk[65536];
    const ssize_t n = read(in_fd_, chunk, sizeof chunk);
    if (n > 0) out.append(chunk, static_cast<std::size_t>(n));
    return n > 0 || (n < 0 && (errno == EINTR || errno == EAGAIN));
  }

  // false once the controller has gone (EPIPE), so the agent winds down.
  bool write_line(const std::string& line) override {
    std::string_view rest = line;
    while (!rest.empty()) {
      const ssize_t n = write(out_fd_, rest.data(), rest.size());
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return false;
      rest.remove_prefix(static_cast<std::size_t>(n));
    }
    return true;
  }

 private:
  int in_fd_;
  int out_fd_;
};

}  // namespace

int run_agent_stdio(int in_fd, int out_fd, const std::string& version) {
  StdioTransport transport(in_fd, out_fd);
  return serve_controller(transport, version);
}

}  // namespace rocehil::agent
