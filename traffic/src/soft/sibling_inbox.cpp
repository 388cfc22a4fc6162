#include "soft/sibling_inbox.hpp"

#include <sys/eventfd.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>

#include "rocehil/common/error.hpp"
#include "soft/udp_socket.hpp"

namespace rocehil::traffic::soft {

struct SiblingInbox::Slot {
  sockaddr_storage source;
  std::uint8_t ecn;
  std::uint16_t length;
  std::array<std::uint8_t, ReceiveBatch::datagram_bytes> bytes;
};

SiblingInbox::SiblingInbox()
    // new[] without () leaves the slots untouched: pages are mapped only once a datagram lands.
    : slots_(new Slot[slots]), wake_(::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) {
  if (wake_ < 0) throw system_error("eventfd for a soft provider's sibling inbox", errno);
}

SiblingInbox::~SiblingInbox() {
  ::close(wake_);
}

bool SiblingInbox::push(const sockaddr_storage& source, std::uint8_t ecn,
                        std::span<const std::uint8_t> datagram) noexcept {
  if (tail_ - head_ == slots || datagram.size() > ReceiveBatch::datagram_bytes) return false;
  Slot& slot = slots_[tail_ % slots];
  slot.source = source;
  slot.ecn = ecn;
  slot.length = static_cast<std::uint16_t>(datagram.size());
  std::memcpy(slot.bytes.data(), datagram.data(), datagram.size());
  if (tail_++ == head_) {
    // Empty until now: the owner may be waiting.
    const std::uint64_t one = 1;
    [[maybe_unused]] const auto written = ::write(wake_, &one, sizeof one);
  }
  return true;
}

std::size_t SiblingInbox::take(ReceiveBatch& batch) noexcept {
  // Empty (most rounds): no syscall. The eventfd is then 0, as push wrote it only with the
  // inbox empty and every take that found something read it.
  if (head_ == tail_) return 0;
  std::uint64_t count = 0;
  [[maybe_unused]] const auto read = ::read(wake_, &count, sizeof count);
  std::size_t n = 0;
  while (n < ReceiveBatch::capacity && head_ != tail_) {
    const Slot& slot = slots_[head_++ % slots];
    batch.hold(n++, slot.source, slot.ecn, {slot.bytes.data(), slot.length});
  }
  if (head_ != tail_) {
    // More than a batch: readable again, so the owner comes back for the rest.
    const std::uint64_t one = 1;
    [[maybe_unused]] const auto written = ::write(wake_, &one, sizeof one);
  }
  return n;
}

namespace {

struct Siblings {
  std::mutex reading;
  std::array<SiblingInbox*, 256> inboxes{};
};

Siblings& siblings() {
  static Siblings s;
  return s;
}

}  // namespace

std::unique_lock<std::mutex> lock_port_reading() {
  return std::unique_lock<std::mutex>(siblings().reading);
}

void register_sibling(std::uint8_t id, SiblingInbox* inbox) noexcept {
  siblings().inboxes[id] = inbox;
}

SiblingInbox* sibling_inbox(std::uint8_t id) noexcept {
  return siblings().inboxes[id];
}

}  // namespace rocehil::traffic::soft
