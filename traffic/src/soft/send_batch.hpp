#pragma once

#include <sys/socket.h>

#include <array>
#include <cstdint>
#include <span>

#include "soft/packet.hpp"
#include "soft/udp_socket.hpp"

namespace rocehil::traffic::soft {

// Packets a QP has built but not yet handed to the kernel, sent together with one sendmmsg: the
// per-packet system call is what a user-space RoCE stack pays most for. Each packet is its
// encoded headers, the payload read in place from the memory region, then pad and ICRC.
class SendBatch {
 public:
  static constexpr std::size_t capacity = 32;

  SendBatch();
  bool full() const { return count_ == capacity; }
  bool empty() const { return count_ == 0; }

  // Encodes one packet into the next slot. False when the batch is full or the headers do not
  // encode (the caller flushes first, so only a programming error gets there).
  bool add(const FlowAddress& flow, const PacketHeaders& headers,
           std::span<const std::uint8_t> payload) noexcept;

  struct Sent {
    std::size_t packets = 0;
    std::size_t bytes = 0;  // UDP payload bytes of the packets the kernel took
  };
  // Sends everything to `to`; packets the kernel refuses (full buffer) are dropped, as a NIC
  // drops on overflow, and recovered by the transport.
  Sent flush(const UdpSocket& socket, const SocketAddress& to) noexcept;

 private:
  struct Slot {
    std::array<std::uint8_t, max_headers_size> header{};
    std::array<std::uint8_t, max_trailer_size> trailer{};
    std::array<iovec, 3> pieces{};
    std::size_t bytes = 0;
  };
  std::array<Slot, capacity> slots_{};
  std::array<mmsghdr, capacity> messages_{};
  std::size_t count_ = 0;
};

}  // namespace rocehil::traffic::soft
