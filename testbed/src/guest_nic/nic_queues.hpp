#pragma once

// The parts of a --vm guest's NIC (nic_loop.hpp) that decide, without I/O: which priority a
// frame the guest sends belongs to, the NIC's transmit queues that hold it while its priority is
// paused, the receive buffer's PFC thresholds, and QEMU's stream framing. Allocation-free after
// construction: they run per frame.

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

#include "dataplane/packet_pool.hpp"

namespace rocehil::testbed::guest_nic {

inline constexpr int priorities = 8;

// The priority a ConnectX in trust-dscp mode gives a frame: its IPv4 DSCP's top three bits
// (mlnx_qos's default dscp2prio map). Anything else (ARP, IPv6 neighbour discovery) goes on
// priority 0, as an untagged frame does.
int priority_of(std::span<const std::uint8_t> frame);

// What the guest handed its NIC and the wire has not taken yet, a FIFO per priority in one
// shared buffer. Once the buffer holds `buffer_bytes` the NIC takes nothing more from the guest
// (has_room): its virtio queue, then its rxe, wait, as a host waits on a NIC that is paused.
class TransmitQueues {
 public:
  explicit TransmitQueues(std::uint32_t buffer_bytes) : buffer_bytes_(buffer_bytes) {}

  bool has_room() const { return held_bytes_ < buffer_bytes_; }
  std::uint32_t room() const { return has_room() ? buffer_bytes_ - held_bytes_ : 0; }
  void resize(std::uint32_t buffer_bytes) { buffer_bytes_ = buffer_bytes; }
  void push(int priority, std::uint32_t slot, std::uint32_t bytes);
  // The next priority to send from: round robin over the queues that hold a frame and whose
  // priority `paused` (bit p) does not hold back; nullopt when none may send.
  std::optional<int> pick(std::uint8_t paused);
  std::uint32_t front(int priority) const { return queues_[priority].front(); }
  void pop(int priority, std::uint32_t bytes);

  bool empty() const { return held_bytes_ == 0; }
  bool holds(int priority) const { return !queues_[priority].empty(); }
  std::uint32_t held_bytes() const { return held_bytes_; }
  std::uint32_t held_bytes(int priority) const { return bytes_[priority]; }

 private:
  std::uint32_t buffer_bytes_;
  std::array<dataplane::SlotFifo, priorities> queues_{};
  std::array<std::uint32_t, priorities> bytes_{};
  std::uint32_t held_bytes_ = 0;
  int next_ = 0;
};

// The NIC's receive buffer toward the guest: over `xoff_bytes` it asks the switch to pause its
// lossless priorities (a ConnectX sends PFC when its receive buffer fills), under `xon_bytes`
// it lets them go again.
class ReceiveThreshold {
 public:
  enum class Change { none, xoff, xon };
  ReceiveThreshold(std::uint32_t xoff_bytes, std::uint32_t xon_bytes)
      : xoff_bytes_(xoff_bytes), xon_bytes_(xon_bytes) {}
  Change held(std::uint32_t bytes);
  bool pausing() const { return pausing_; }

 private:
  std::uint32_t xoff_bytes_, xon_bytes_;
  bool pausing_ = false;
};

// QEMU's `-netdev stream` framing: each frame as a 4-byte big-endian length, then its bytes.
// Fed whatever a read returned, it hands back whole frames; a frame split over reads is kept
// until its end arrives.
class StreamFramer {
 public:
  static constexpr std::size_t max_frame = dataplane::PacketPool::slot_bytes - 64;

  // Appends `bytes` (at most `space()` of them) to what is held.
  void append(std::span<const std::uint8_t> bytes);
  std::span<std::uint8_t> tail() { return {buffer_.data() + end_, buffer_.size() - end_}; }
  void appended(std::size_t n) { end_ += n; }
  std::size_t space() const { return buffer_.size() - end_; }
  // The next whole frame, or an empty span when it has not all arrived. A length of 0 or over
  // max_frame is not QEMU's framing: bad() is set and nothing more comes out.
  std::span<const std::uint8_t> next();
  // Moves what is held to the front, making room for the next read.
  void compact();
  bool bad() const { return bad_; }

 private:
  std::array<std::uint8_t, 65536> buffer_{};
  std::size_t begin_ = 0, end_ = 0;
  bool bad_ = false;
};

// The 4-byte header QEMU's stream expects before a frame of `length` bytes.
std::array<std::uint8_t, 4> stream_header(std::uint32_t length);

}  // namespace rocehil::testbed::guest_nic
