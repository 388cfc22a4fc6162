#include "soft/udp_socket.hpp"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <netinet/ip.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "rocehil/common/error.hpp"
#include "soft/shared_port.hpp"

namespace rocehil::traffic::soft {

SocketAddress SocketAddress::parse(const std::string& address, std::uint16_t port) {
  SocketAddress a;
  auto* v4 = reinterpret_cast<sockaddr_in*>(&a.storage);
  auto* v6 = reinterpret_cast<sockaddr_in6*>(&a.storage);
  if (::inet_pton(AF_INET, address.c_str(), &v4->sin_addr) == 1) {
    v4->sin_family = AF_INET;
    v4->sin_port = htons(port);
    a.length = sizeof(sockaddr_in);
  } else if (::inet_pton(AF_INET6, address.c_str(), &v6->sin6_addr) == 1) {
    v6->sin6_family = AF_INET6;
    v6->sin6_port = htons(port);
    a.length = sizeof(sockaddr_in6);
  } else {
    throw input_error(fmt::format("'{}' is not an IPv4 or IPv6 address", address));
  }
  return a;
}

std::uint16_t SocketAddress::port() const {
  return ntohs(ipv6() ? reinterpret_cast<const sockaddr_in6*>(&storage)->sin6_port
                      : reinterpret_cast<const sockaddr_in*>(&storage)->sin_port);
}

std::string SocketAddress::address_text() const {
  char text[INET6_ADDRSTRLEN] = {};
  if (ipv6())
    ::inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6*>(&storage)->sin6_addr, text,
                sizeof text);
  else
    ::inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(&storage)->sin_addr, text,
                sizeof text);
  return text;
}

std::array<std::uint8_t, 16> SocketAddress::address_bytes() const {
  std::array<std::uint8_t, 16> out{};
  if (ipv6())
    std::memcpy(out.data(), &reinterpret_cast<const sockaddr_in6*>(&storage)->sin6_addr, 16);
  else
    std::memcpy(out.data(), &reinterpret_cast<const sockaddr_in*>(&storage)->sin_addr, 4);
  return out;
}

UdpSocket::UdpSocket(const SocketAddress& local, std::uint8_t traffic_class, int buffer_bytes,
                     bool shared)
    : local_(local) {
  const int family = local.ipv6() ? AF_INET6 : AF_INET;
  fd_ = ::socket(family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd_ < 0) throw system_error("socket(UDP)", errno);
  const int on = 1;
  const int tos = traffic_class;
  const int pmtu = local.ipv6() ? IPV6_PMTUDISC_DO : IP_PMTUDISC_DO;
  const bool ok =
      local.ipv6() ? ::setsockopt(fd_, IPPROTO_IPV6, IPV6_TCLASS, &tos, sizeof tos) == 0 &&
                         ::setsockopt(fd_, IPPROTO_IPV6, IPV6_RECVTCLASS, &on, sizeof on) == 0 &&
                         ::setsockopt(fd_, IPPROTO_IPV6, IPV6_MTU_DISCOVER, &pmtu, sizeof pmtu) == 0
                   : ::setsockopt(fd_, IPPROTO_IP, IP_TOS, &tos, sizeof tos) == 0 &&
                         ::setsockopt(fd_, IPPROTO_IP, IP_RECVTOS, &on, sizeof on) == 0 &&
                         ::setsockopt(fd_, IPPROTO_IP, IP_MTU_DISCOVER, &pmtu, sizeof pmtu) == 0;
  if (!ok) {
    const int e = errno;
    ::close(fd_);
    throw system_error("setsockopt on a RoCEv2 UDP socket", e);
  }
  // Best effort: as root the FORCE variants pass net.core.[rw]mem_max (a default host caps
  // buffers at 208 KiB, far less than one QP's window); otherwise the kernel caps them there.
  if (::setsockopt(fd_, SOL_SOCKET, SO_SNDBUFFORCE, &buffer_bytes, sizeof buffer_bytes) != 0)
    ::setsockopt(fd_, SOL_SOCKET, SO_SNDBUF, &buffer_bytes, sizeof buffer_bytes);
  if (::setsockopt(fd_, SOL_SOCKET, SO_RCVBUFFORCE, &buffer_bytes, sizeof buffer_bytes) != 0)
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &buffer_bytes, sizeof buffer_bytes);
  if (shared && ::setsockopt(fd_, SOL_SOCKET, SO_REUSEPORT, &on, sizeof on) != 0) {
    const int e = errno;
    ::close(fd_);
    throw system_error("setsockopt(SO_REUSEPORT) on a RoCEv2 UDP socket", e);
  }
  if (::bind(fd_, reinterpret_cast<const sockaddr*>(&local.storage), local.length) != 0) {
    const int e = errno;
    ::close(fd_);
    throw system_error(fmt::format("bind UDP {}:{}", local.address_text(), local.port()), e);
  }
  sockaddr_storage bound{};
  socklen_t length = sizeof bound;
  ::getsockname(fd_, reinterpret_cast<sockaddr*>(&bound), &length);
  local_.storage = bound;
  local_.length = length;
}

UdpSocket::~UdpSocket() {
  if (fd_ >= 0) ::close(fd_);
}

UdpSocket::UdpSocket(UdpSocket&& other) noexcept : fd_(other.fd_), local_(other.local_) {
  other.fd_ = -1;
}

UdpSocket& UdpSocket::operator=(UdpSocket&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = other.fd_;
    local_ = other.local_;
    other.fd_ = -1;
  }
  return *this;
}

bool UdpSocket::send(const SocketAddress& to, std::span<const iovec> pieces) noexcept {
  msghdr message{};
  message.msg_name = const_cast<sockaddr_storage*>(&to.storage);
  message.msg_namelen = to.length;
  message.msg_iov = const_cast<iovec*>(pieces.data());
  message.msg_iovlen = pieces.size();
  return ::sendmsg(fd_, &message, MSG_DONTWAIT) >= 0;
}

ReceiveBatch::ReceiveBatch() {
  for (std::size_t i = 0; i < capacity; ++i) {
    iovecs_[i] = {buffers_.data() + i * datagram_bytes, datagram_bytes};
    passed_iovecs_[i] = {{{&sources_[i], sizeof(sockaddr_storage)},
                          {&ecn_[i], 1},
                          {buffers_.data() + i * datagram_bytes, datagram_bytes}}};
  }
}

std::size_t ReceiveBatch::receive(const UdpSocket& socket) noexcept {
  for (std::size_t i = 0; i < capacity; ++i) {
    msghdr& h = headers_[i].msg_hdr;
    h.msg_iov = &iovecs_[i];
    h.msg_iovlen = 1;
    h.msg_name = &sources_[i];
    h.msg_namelen = sizeof(sockaddr_storage);
    h.msg_control = controls_[i].data();
    h.msg_controllen = controls_[i].size();
    h.msg_flags = 0;
  }
  const int n = ::recvmmsg(socket.fd(), headers_.data(), capacity, MSG_DONTWAIT, nullptr);
  if (n <= 0) return 0;
  for (int i = 0; i < n; ++i) {
    const auto k = static_cast<std::size_t>(i);
    lengths_[k] = headers_[k].msg_len;
    ecn_[k] = 0;
    msghdr& h = headers_[k].msg_hdr;
    for (cmsghdr* c = CMSG_FIRSTHDR(&h); c != nullptr; c = CMSG_NXTHDR(&h, c)) {
      // IPv4 gives the TOS as one byte, IPv6 the traffic class as an int.
      if (c->cmsg_level == IPPROTO_IP && c->cmsg_type == IP_TOS)
        ecn_[k] = *CMSG_DATA(c) & 3;
      else if (c->cmsg_level == IPPROTO_IPV6 && c->cmsg_type == IPV6_TCLASS) {
        int tclass = 0;
        std::memcpy(&tclass, CMSG_DATA(c), sizeof tclass);
        ecn_[k] = static_cast<std::uint8_t>(tclass & 3);
      }
    }
  }
  return static_cast<std::size_t>(n);
}

std::size_t ReceiveBatch::receive_passed(int fd, sa_family_t family) noexcept {
  constexpr std::size_t header_bytes = sizeof(sockaddr_storage) + 1;
  for (std::size_t i = 0; i < capacity; ++i) {
    msghdr& h = headers_[i].msg_hdr;
    h.msg_iov = passed_iovecs_[i].data();
    h.msg_iovlen = passed_iovecs_[i].size();
    h.msg_name = &passers_[i];
    h.msg_namelen = sizeof(sockaddr_in);
    h.msg_control = nullptr;
    h.msg_controllen = 0;
    h.msg_flags = 0;
  }
  const int n = ::recvmmsg(fd, headers_.data(), capacity, MSG_DONTWAIT, nullptr);
  if (n <= 0) return 0;
  for (int i = 0; i < n; ++i) {
    const auto k = static_cast<std::size_t>(i);
    // Only another provider's SharedPort passes datagrams on, from 127.79.ID.1, with a source
    // of the family its own RoCEv2 socket has.
    const sockaddr_in& passer = passers_[k];
    const bool from_a_provider = passer.sin_family == AF_INET &&
                                 (ntohl(passer.sin_addr.s_addr) & 0xffff00ffu) == 0x7f4f0001u &&
                                 ntohs(passer.sin_port) == SharedPort::forward_port;
    const bool whole = headers_[k].msg_len > header_bytes && sources_[k].ss_family == family;
    // An empty datagram fails decoding and is counted as dropped.
    lengths_[k] = from_a_provider && whole ? headers_[k].msg_len - header_bytes : 0;
    ecn_[k] &= 3;
  }
  return static_cast<std::size_t>(n);
}

void ReceiveBatch::hold(std::size_t i, const sockaddr_storage& source, std::uint8_t ecn,
                        std::span<const std::uint8_t> datagram) noexcept {
  std::memcpy(buffers_.data() + i * datagram_bytes, datagram.data(), datagram.size());
  sources_[i] = source;
  ecn_[i] = ecn;
  lengths_[i] = datagram.size();
}

}  // namespace rocehil::traffic::soft
