#include "soft/shared_port.hpp"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <map>
#include <random>
#include <string>

#include "rocehil/common/error.hpp"

namespace rocehil::traffic::soft {

namespace {

// Deep enough for the bursts a provider receives for another between two of its polls.
constexpr int forward_buffer_bytes = 8 << 20;

sockaddr_in loopback_of(std::uint8_t id) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(SharedPort::forward_port);
  a.sin_addr.s_addr = SharedPort::address_of(id);
  return a;
}

struct Registry {
  std::mutex mutex;
  std::map<std::string, std::weak_ptr<UdpSocket>> sockets;  // by address text
};

Registry& registry() {
  static Registry r;
  return r;
}

}  // namespace

std::shared_ptr<UdpSocket> roce_socket_for(const SocketAddress& local, std::uint8_t traffic_class,
                                           int buffer_bytes) {
  Registry& r = registry();
  const std::lock_guard<std::mutex> hold(r.mutex);
  std::weak_ptr<UdpSocket>& slot = r.sockets[local.address_text()];
  if (auto socket = slot.lock()) return socket;
  auto socket = std::make_shared<UdpSocket>(local, traffic_class, buffer_bytes, /*shared=*/true);
  slot = socket;
  return socket;
}

std::unique_lock<std::mutex> lock_roce_sockets() {
  return std::unique_lock<std::mutex>(registry().mutex);
}

void forget_roce_socket(const SocketAddress& local) {
  registry().sockets.erase(local.address_text());
}

in_addr_t SharedPort::address_of(std::uint8_t id) noexcept {
  return htonl((127u << 24) | (79u << 16) | (std::uint32_t{id} << 8) | 1u);
}

SharedPort::SharedPort() {
  fd_ = ::socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd_ < 0) throw system_error("socket(UDP) for the shared RoCEv2 port", errno);
  int buffer = forward_buffer_bytes;
  if (::setsockopt(fd_, SOL_SOCKET, SO_RCVBUFFORCE, &buffer, sizeof buffer) != 0)
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &buffer, sizeof buffer);
  if (::setsockopt(fd_, SOL_SOCKET, SO_SNDBUFFORCE, &buffer, sizeof buffer) != 0)
    ::setsockopt(fd_, SOL_SOCKET, SO_SNDBUF, &buffer, sizeof buffer);
  // Id 0 is never given: QPN 0 and 1 are the special QPs of IBTA.
  std::random_device random;
  const unsigned first = random() % 255;
  for (unsigned k = 0; k < 255; ++k) {
    const auto id = static_cast<std::uint8_t>(1 + (first + k) % 255);
    const sockaddr_in at = loopback_of(id);
    if (::bind(fd_, reinterpret_cast<const sockaddr*>(&at), sizeof at) == 0) {
      id_ = id;
      return;
    }
    if (errno == EADDRINUSE) continue;
    const int e = errno;
    ::close(fd_);
    throw system_error(
        fmt::format("bind UDP 127.79.{}.1:{} (the soft providers of a host pass each other's "
                    "packets over loopback: is loopback up?)",
                    id, forward_port),
        e);
  }
  ::close(fd_);
  throw Error(ExitCode::infrastructure,
              "255 soft providers already share this host's RoCEv2 port: end some of them");
}

SharedPort::~SharedPort() {
  if (fd_ >= 0) ::close(fd_);
}

bool SharedPort::forward(std::uint8_t id, const sockaddr_storage& source, std::uint8_t ecn,
                         std::span<const std::uint8_t> datagram) noexcept {
  const sockaddr_in to = loopback_of(id);
  std::array<iovec, 3> pieces{{{const_cast<sockaddr_storage*>(&source), sizeof source},
                               {&ecn, 1},
                               {const_cast<std::uint8_t*>(datagram.data()), datagram.size()}}};
  msghdr message{};
  message.msg_name = const_cast<sockaddr_in*>(&to);
  message.msg_namelen = sizeof to;
  message.msg_iov = pieces.data();
  message.msg_iovlen = pieces.size();
  return ::sendmsg(fd_, &message, MSG_DONTWAIT) >= 0;
}

}  // namespace rocehil::traffic::soft
