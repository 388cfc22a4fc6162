#pragma once

#include <sys/socket.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>

namespace rocehil::traffic::soft {

class ReceiveBatch;

// The datagrams that other soft providers of this process read from the RoCEv2 socket they
// share with this one (roce_socket_for) and that are for this one's QPs, in the order they were
// read. Handing them over in-process, under the lock those providers read the socket by
// (lock_port_reading), keeps a flow's datagrams in their order: one a sibling read before this
// provider's own read is here by the time it reads, and it empties this first. Passed over
// loopback instead, as between processes, one could arrive after the next one this provider
// read itself, and its QP would NAK a flow that lost nothing.
//
// Slots are allocated once and touched only when used; a full inbox drops, as a wire would (the
// provider is not polling).
class SiblingInbox {
 public:
  // More than the shared socket's 8 MB holds of 4 KB datagrams: a sibling that reads the whole
  // socket for this provider in one go loses none of it (1,024 lost some in
  // SoftSharedPort.TwoProvidersOnOneAddressBothReceiveEveryFlowOfTheirs).
  static constexpr std::size_t slots = 4096;

  SiblingInbox();  // throws rocehil::Error when no eventfd can be made
  ~SiblingInbox();
  SiblingInbox(const SiblingInbox&) = delete;
  SiblingInbox& operator=(const SiblingInbox&) = delete;

  // Under lock_port_reading. False when full.
  bool push(const sockaddr_storage& source, std::uint8_t ecn,
            std::span<const std::uint8_t> datagram) noexcept;
  // Under lock_port_reading: moves the oldest datagrams into `batch`; how many.
  std::size_t take(ReceiveBatch& batch) noexcept;
  bool empty() const noexcept { return head_ == tail_; }

  // Readable while the inbox holds something pushed since the last take(): the provider waits
  // on it beside its socket, as it would on a loopback socket.
  int wake_fd() const noexcept { return wake_; }

 private:
  struct Slot;
  std::unique_ptr<Slot[]> slots_;
  std::size_t head_ = 0, tail_ = 0;  // taken from head_, pushed at tail_; tail_ - head_ held
  int wake_ = -1;                    // an eventfd
};

// Serialises reading the RoCEv2 sockets of this process's soft providers with handing datagrams
// to each other's inboxes. The registry of inboxes is by provider id (the top byte of its QPNs),
// read and changed under the same lock.
std::unique_lock<std::mutex> lock_port_reading();
// Under lock_port_reading: `inbox` (nullptr: none) for the provider `id` of this process.
void register_sibling(std::uint8_t id, SiblingInbox* inbox) noexcept;
// Under lock_port_reading: the inbox of provider `id` of this process, or nullptr.
SiblingInbox* sibling_inbox(std::uint8_t id) noexcept;

}  // namespace rocehil::traffic::soft
