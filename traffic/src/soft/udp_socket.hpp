#pragma once

#include <netinet/in.h>
#include <sys/socket.h>

#include <array>
#include <cstdint>
#include <span>
#include <string>

namespace rocehil::traffic::soft {

// An IPv4 or IPv6 UDP endpoint as the socket calls want it.
struct SocketAddress {
  sockaddr_storage storage{};
  socklen_t length = 0;

  static SocketAddress parse(const std::string& address, std::uint16_t port);  // throws
  bool ipv6() const { return storage.ss_family == AF_INET6; }
  std::uint16_t port() const;
  std::string address_text() const;
  // The 4 (IPv4) or 16 (IPv6) address bytes, network order, in the first bytes of the result.
  std::array<std::uint8_t, 16> address_bytes() const;
};

// A non-blocking UDP socket that owns its descriptor. RoCEv2 needs three things from it: DF set
// (so Linux writes IPv4 ID 0 and the ICRC is predictable), a traffic class on send, and the ECN
// bits of each received datagram (IP_RECVTOS / IPV6_RECVTCLASS).
class UdpSocket {
 public:
  UdpSocket() = default;
  // Binds `local`; `traffic_class` is the whole TOS byte (DSCP << 2 | ECN). Throws rocehil::Error.
  // `shared`: SO_REUSEPORT, so that other sockets of this user bind the same address and port.
  UdpSocket(const SocketAddress& local, std::uint8_t traffic_class, int buffer_bytes,
            bool shared = false);
  ~UdpSocket();
  UdpSocket(UdpSocket&& other) noexcept;
  UdpSocket& operator=(UdpSocket&& other) noexcept;
  UdpSocket(const UdpSocket&) = delete;
  UdpSocket& operator=(const UdpSocket&) = delete;

  int fd() const { return fd_; }
  const SocketAddress& local() const { return local_; }

  // Sends the pieces as one datagram. False when the kernel refused it (full buffer): the
  // transport treats that as a loss, as a NIC drop would be.
  bool send(const SocketAddress& to, std::span<const iovec> pieces) noexcept;

 private:
  int fd_ = -1;
  SocketAddress local_;
};

// Datagrams received in one batch (recvmmsg), with their source and ECN bits. Buffers are
// allocated once.
class ReceiveBatch {
 public:
  static constexpr std::size_t capacity = 64;
  static constexpr std::size_t datagram_bytes = 9216;

  ReceiveBatch();
  // Receives what is waiting on `socket` without blocking; returns how many datagrams.
  std::size_t receive(const UdpSocket& socket) noexcept;
  // The same from the socket `fd` that SharedPort::forward sends to: each datagram is preceded
  // by the source it came from and its ECN bits. One not sent from a SharedPort's address, or
  // whose source is not of `family`, comes back empty (it fails decoding, and is counted).
  std::size_t receive_passed(int fd, sa_family_t family) noexcept;
  // Puts datagram `i` (below capacity, at most datagram_bytes) in the batch by hand: what a
  // SiblingInbox hands over.
  void hold(std::size_t i, const sockaddr_storage& source, std::uint8_t ecn,
            std::span<const std::uint8_t> datagram) noexcept;

  std::span<const std::uint8_t> data(std::size_t i) const {
    return {buffers_.data() + i * datagram_bytes, lengths_[i]};
  }
  const sockaddr_storage& source(std::size_t i) const { return sources_[i]; }
  std::uint8_t ecn(std::size_t i) const { return ecn_[i]; }

 private:
  std::array<std::uint8_t, capacity * datagram_bytes> buffers_;
  std::array<sockaddr_storage, capacity> sources_{};
  std::array<std::array<std::uint8_t, 64>, capacity> controls_{};
  std::array<iovec, capacity> iovecs_{};
  std::array<std::array<iovec, 3>, capacity> passed_iovecs_{};
  std::array<sockaddr_in, capacity> passers_{};
  std::array<mmsghdr, capacity> headers_{};
  std::array<std::size_t, capacity> lengths_{};
  std::array<std::uint8_t, capacity> ecn_{};
};

}  // namespace rocehil::traffic::soft
