#include "guest_nic/nic_queues.hpp"

#include <cstring>

#include "dataplane/packet.hpp"

namespace rocehil::testbed::guest_nic {

int priority_of(std::span<const std::uint8_t> frame) {
  const auto ip = dataplane::parse_ipv4(frame);
  return ip ? ip->dscp >> 3 : 0;
}

void TransmitQueues::push(int priority, std::uint32_t slot, std::uint32_t bytes) {
  queues_[priority].push(slot);
  bytes_[priority] += bytes;
  held_bytes_ += bytes;
}

std::optional<int> TransmitQueues::pick(std::uint8_t paused) {
  for (int i = 0; i < priorities; ++i) {
    const int p = (next_ + i) % priorities;
    if (queues_[p].empty() || (paused >> p & 1)) continue;
    next_ = (p + 1) % priorities;
    return p;
  }
  return std::nullopt;
}

void TransmitQueues::pop(int priority, std::uint32_t bytes) {
  queues_[priority].pop();
  bytes_[priority] -= bytes;
  held_bytes_ -= bytes;
}

ReceiveThreshold::Change ReceiveThreshold::held(std::uint32_t bytes) {
  if (!pausing_ && bytes > xoff_bytes_) {
    pausing_ = true;
    return Change::xoff;
  }
  if (pausing_ && bytes < xon_bytes_) {
    pausing_ = false;
    return Change::xon;
  }
  return Change::none;
}

void StreamFramer::append(std::span<const std::uint8_t> bytes) {
  std::memcpy(buffer_.data() + end_, bytes.data(), bytes.size());
  end_ += bytes.size();
}

std::span<const std::uint8_t> StreamFramer::next() {
  if (bad_ || end_ - begin_ < 4) return {};
  const std::uint8_t* at = buffer_.data() + begin_;
  const std::uint32_t length = static_cast<std::uint32_t>(at[0]) << 24 |
                               static_cast<std::uint32_t>(at[1]) << 16 |
                               static_cast<std::uint32_t>(at[2]) << 8 | at[3];
  if (length == 0 || length > max_frame) {
    bad_ = true;
    return {};
  }
  if (end_ - begin_ < 4 + length) return {};
  begin_ += 4 + length;
  return {at + 4, length};
}

void StreamFramer::compact() {
  if (begin_ == 0) return;
  std::memmove(buffer_.data(), buffer_.data() + begin_, end_ - begin_);
  end_ -= begin_;
  begin_ = 0;
}

std::array<std::uint8_t, 4> stream_header(std::uint32_t length) {
  return {static_cast<std::uint8_t>(length >> 24), static_cast<std::uint8_t>(length >> 16),
          static_cast<std::uint8_t>(length >> 8), static_cast<std::uint8_t>(length)};
}

}  // namespace rocehil::testbed::guest_nic
