#include "soft/send_batch.hpp"

namespace rocehil::traffic::soft {

SendBatch::SendBatch() {
  for (std::size_t i = 0; i < capacity; ++i) {
    messages_[i].msg_hdr.msg_iov = slots_[i].pieces.data();
    messages_[i].msg_hdr.msg_iovlen = slots_[i].pieces.size();
  }
}

bool SendBatch::add(const FlowAddress& flow, const PacketHeaders& headers,
                    std::span<const std::uint8_t> payload) noexcept {
  if (full()) return false;
  Slot& s = slots_[count_];
  const std::size_t header_bytes = encode_headers(headers, s.header);
  if (header_bytes == 0) return false;
  const std::size_t trailer_bytes =
      encode_trailer(flow, {s.header.data(), header_bytes}, payload, s.trailer);
  if (trailer_bytes == 0) return false;
  s.pieces[0] = {s.header.data(), header_bytes};
  s.pieces[1] = {const_cast<std::uint8_t*>(payload.data()), payload.size()};
  s.pieces[2] = {s.trailer.data(), trailer_bytes};
  s.bytes = header_bytes + payload.size() + trailer_bytes;
  ++count_;
  return true;
}

SendBatch::Sent SendBatch::flush(const UdpSocket& socket, const SocketAddress& to) noexcept {
  Sent sent;
  if (count_ == 0) return sent;
  for (std::size_t i = 0; i < count_; ++i) {
    messages_[i].msg_hdr.msg_name = const_cast<sockaddr_storage*>(&to.storage);
    messages_[i].msg_hdr.msg_namelen = to.length;
  }
  // sendmmsg stops at the first message the kernel refuses (full buffer, firewall): that one
  // is lost, as a NIC drops on overflow, and the transport recovers it; the rest go on.
  std::size_t next = 0;
  while (next < count_) {
    const int n = ::sendmmsg(socket.fd(), messages_.data() + next,
                             static_cast<unsigned>(count_ - next), MSG_DONTWAIT);
    const std::size_t taken = n > 0 ? static_cast<std::size_t>(n) : 0;
    for (std::size_t i = next; i < next + taken; ++i) {
      ++sent.packets;
      sent.bytes += slots_[i].bytes;
    }
    next += taken + (next + taken < count_ ? 1 : 0);
  }
  count_ = 0;
  return sent;
}

}  // namespace rocehil::traffic::soft
