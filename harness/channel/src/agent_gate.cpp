#include "rocehil/channel/agent_gate.hpp"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <vector>

#include "rocehil/common/error.hpp"

namespace rocehil::channel {

namespace {

constexpr int listen_backlog = 4096;  // thousands of agents dial at once; the kernel caps it

std::string address_of(const sockaddr_in& sa) {
  char text[INET_ADDRSTRLEN] = {};
  ::inet_ntop(AF_INET, &sa.sin_addr, text, sizeof text);
  return text;
}

}  // namespace

int listen_for_agents(const std::string& address, std::uint16_t port, std::uint16_t& bound_port) {
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(port);
  if (::inet_pton(AF_INET, address.c_str(), &sa.sin_addr) != 1)
    throw input_error(fmt::format(
        "'{}' is not an IPv4 address for agents to dial; give the controller's address as "
        "a.b.c.d",
        address));
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) throw system_error("making the socket agents dial", errno);
  const int on = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
  if (::bind(fd, reinterpret_cast<const sockaddr*>(&sa), sizeof sa) != 0 ||
      ::listen(fd, listen_backlog) != 0) {
    const int err = errno;
    ::close(fd);
    throw system_error(fmt::format("listening for agents on {}:{}", address, port), err);
  }
  socklen_t len = sizeof sa;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&sa), &len);
  bound_port = ntohs(sa.sin_port);
  return fd;
}

AgentGate::AgentGate(EventLoop& loop, const TlsContext& context, int listen_fd, GateLimits limits,
                     GateEvents& events)
    : loop_(loop), context_(context), listen_fd_(listen_fd), limits_(limits), events_(events) {
  loop_.watch(listen_fd_, EPOLLIN, [this](std::uint32_t) { accept_ready(); });
}

AgentGate::~AgentGate() {
  loop_.forget(listen_fd_);
  for (auto& [fd, pending] : pending_) {
    loop_.forget(fd);
    ::close(fd);
  }
}

void AgentGate::accept_ready() {
  while (true) {
    sockaddr_in sa{};
    socklen_t len = sizeof sa;
    const int fd =
        ::accept4(listen_fd_, reinterpret_cast<sockaddr*>(&sa), &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EMFILE || errno == ENFILE) {
        // The connection stays queued, the listener readable: pause until expire() sees the
        // pause over, rather than being woken at once for ever.
        loop_.change(listen_fd_, 0);
        paused_until_ = std::chrono::steady_clock::now() + pause_without_descriptors;
      }
      // EAGAIN: none left. Anything else (a connection reset while queued) ends this turn; the
      // listener stays, and is tried again when it is readable.
      return;
    }
    std::string peer = address_of(sa);
    std::size_t& from_peer = per_address_[peer];
    if (from_peer >= limits_.per_address || pending_.size() >= limits_.total) {
      events_.refused(peer, from_peer >= limits_.per_address
                                ? fmt::format("{} handshakes already in progress from this "
                                              "address (the limit); connection closed",
                                              from_peer)
                                : fmt::format("{} handshakes already in progress (the limit); "
                                              "connection closed",
                                              pending_.size()));
      if (from_peer == 0) per_address_.erase(peer);
      ::close(fd);
      continue;
    }
    ++from_peer;
    pending_.emplace(fd, Pending{peer, std::make_unique<TlsSession>(context_, fd),
                                 std::chrono::steady_clock::now() + limits_.handshake_deadline});
    loop_.watch(fd, EPOLLIN, [this, fd](std::uint32_t) { advance(fd); });
  }
}

void AgentGate::advance(int fd) {
  const auto it = pending_.find(fd);
  if (it == pending_.end()) return;
  switch (it->second.session->handshake()) {
    case Step::done: end(fd, nullptr); break;
    case Step::want_read: loop_.change(fd, EPOLLIN); break;
    case Step::want_write: loop_.change(fd, EPOLLOUT); break;
    case Step::failed: {
      const std::string why = it->second.session->failure();
      end(fd, &why);
      break;
    }
  }
}

// The handshake is over: the connection joins (why == nullptr) or is refused and closed.
void AgentGate::end(int fd, const std::string* why) {
  auto node = pending_.extract(fd);
  Pending& p = node.mapped();
  loop_.forget(fd);
  if (auto count = per_address_.find(p.peer); count != per_address_.end() && --count->second == 0)
    per_address_.erase(count);
  if (why == nullptr) {
    events_.joined(Joined{fd, std::move(p.session), p.peer});
    return;
  }
  p.session.reset();
  ::close(fd);
  events_.refused(p.peer, *why);
}

void AgentGate::expire(std::chrono::steady_clock::time_point now) {
  if (paused_until_ && now >= *paused_until_) {
    paused_until_.reset();
    loop_.change(listen_fd_, EPOLLIN);
  }
  std::vector<int> late;
  for (const auto& [fd, p] : pending_)
    if (now >= p.deadline) late.push_back(fd);
  const std::string why =
      fmt::format("did not complete the handshake within {:.1f} s; connection closed",
                  std::chrono::duration<double>(limits_.handshake_deadline).count());
  for (const int fd : late) end(fd, &why);
}

}  // namespace rocehil::channel
