#pragma once

#include <netinet/in.h>
#include <sys/socket.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <span>

#include "soft/udp_socket.hpp"

namespace rocehil::traffic::soft {

// The RoCEv2 port that the soft providers of one host share, as the processes of a host share
// one NIC. Each provider binds UDP 4791 on its address with SO_REUSEPORT, and the kernel hands a
// flow to one of them by a hash of its addresses and ports, not by the QP it is for. So each
// provider claims an id, the top byte of every QPN it gives out, by binding a loopback address
// of its own (127.79.ID.1, port forward_port): a datagram for another provider's QPN is passed
// to that address with the source and ECN bits it arrived with, and taken from there as if from
// the wire. With one provider on a host nothing is passed on.
//
// Loopback is the channel because a UDP socket's queue is bounded by its buffer alone (a unix
// datagram socket's by net.unix.max_dgram_qlen, 10 in a fresh namespace), and a network namespace
// has loopback addresses of its own, so testbed hosts in one kernel do not see each other's ids.
//
// Providers of one process (the sessions of one agent: the parts of a case) share one socket
// besides (roce_socket_for): whichever of them polls reads what arrived for all and passes on
// the others', so a provider whose traffic has ended, or has not begun, holds nothing back from
// them; what is passed to it waits in its own queue until it polls. Providers of separate
// processes share the port through the kernel, which has no such guarantee: one that stops
// polling keeps the flows the kernel gave it until it ends.
class SharedPort {
 public:
  static constexpr std::uint16_t forward_port = 47911;

  // Claims the first free id from a random one on; throws rocehil::Error when all are held or
  // loopback is down.
  SharedPort();
  ~SharedPort();
  SharedPort(const SharedPort&) = delete;
  SharedPort& operator=(const SharedPort&) = delete;

  std::uint8_t id() const noexcept { return id_; }
  int fd() const noexcept { return fd_; }

  // Passes `datagram`, received from `source` with ECN bits `ecn`, to the provider holding
  // `id`, as the source address, the ECN bits and the datagram (ReceiveBatch::receive_passed
  // reads them). False when none holds it or its buffer is full: the datagram is lost, as on a
  // wire.
  bool forward(std::uint8_t id, const sockaddr_storage& source, std::uint8_t ecn,
               std::span<const std::uint8_t> datagram) noexcept;

  // The loopback address that id `id` is held at (network order).
  static in_addr_t address_of(std::uint8_t id) noexcept;

 private:
  int fd_ = -1;
  std::uint8_t id_ = 0;
};

// The RoCEv2 socket of `local` for this process: the one its providers on that address already
// use, or a new one (SO_REUSEPORT, `traffic_class` for the CNPs it sends). Throws as UdpSocket.
std::shared_ptr<UdpSocket> roce_socket_for(const SocketAddress& local, std::uint8_t traffic_class,
                                           int buffer_bytes);

// Held while a provider decides whether it is the last of this process on its socket: no other
// provider takes that socket meanwhile. `forget_roce_socket` then drops it from the registry.
std::unique_lock<std::mutex> lock_roce_sockets();
void forget_roce_socket(const SocketAddress& local);

}  // namespace rocehil::traffic::soft
