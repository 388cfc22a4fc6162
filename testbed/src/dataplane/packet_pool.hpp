#pragma once

// The switch's packet buffer: fixed slots, each holding one frame up to a jumbo's size, and the
// FIFOs of slot numbers its queues are made of. Mapped once at start and never grown: the
// forwarding loop allocates nothing. The slots are mapped without being touched, and the free
// list hands back the most recently freed slot first, so the memory a switch uses is what its
// queues hold at their deepest, not what they could hold.

#include <sys/mman.h>

#include <cstddef>
#include <cstdint>
#include <new>
#include <span>
#include <vector>

namespace rocehil::testbed::dataplane {

struct SlotInfo {
  std::uint16_t length = 0;
  std::uint16_t ingress_port = 0;
  std::uint8_t queue = 0;
  bool lossless = false;  // counted in the ingress port's PFC accounting
};

class PacketPool {
 public:
  static constexpr std::size_t slot_bytes = 9216 + 64;  // a 9000-byte MTU frame, and room

  explicit PacketPool(std::uint32_t slots) : info_(slots), free_(slots) {
    void* memory = mmap(nullptr, slots * slot_bytes, PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (memory == MAP_FAILED) throw std::bad_alloc();
    data_ = static_cast<std::uint8_t*>(memory);
    bytes_ = slots * slot_bytes;
    for (std::uint32_t i = 0; i < slots; ++i) free_[i] = slots - 1 - i;
  }
  ~PacketPool() { munmap(data_, bytes_); }
  PacketPool(const PacketPool&) = delete;
  PacketPool& operator=(const PacketPool&) = delete;

  bool empty() const { return free_.empty(); }
  std::uint32_t take() {
    const std::uint32_t slot = free_.back();
    free_.pop_back();  // never reallocates: the vector only shrinks and regrows within capacity
    return slot;
  }
  void give(std::uint32_t slot) { free_.push_back(slot); }
  std::size_t free_slots() const { return free_.size(); }

  std::uint8_t* bytes(std::uint32_t slot) { return data_ + slot * slot_bytes; }
  std::span<std::uint8_t> frame(std::uint32_t slot) { return {bytes(slot), info_[slot].length}; }
  SlotInfo& info(std::uint32_t slot) { return info_[slot]; }

 private:
  std::uint8_t* data_ = nullptr;
  std::size_t bytes_ = 0;
  std::vector<SlotInfo> info_;
  std::vector<std::uint32_t> free_;
};

// A FIFO of slot numbers with a fixed power-of-two capacity.
class SlotFifo {
 public:
  static constexpr std::uint32_t capacity = 8192;

  SlotFifo() : ring_(capacity) {}
  bool empty() const { return head_ == tail_; }
  bool full() const { return tail_ - head_ == capacity; }
  std::uint32_t size() const { return tail_ - head_; }
  void push(std::uint32_t slot) { ring_[tail_++ & (capacity - 1)] = slot; }
  std::uint32_t front() const { return ring_[head_ & (capacity - 1)]; }
  std::uint32_t pop() { return ring_[head_++ & (capacity - 1)]; }

 private:
  std::vector<std::uint32_t> ring_;
  std::uint32_t head_ = 0, tail_ = 0;
};

}  // namespace rocehil::testbed::dataplane
