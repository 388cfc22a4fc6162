#pragma once

// An open-addressing hash table for per-flow and per-QP counters on the per-frame path: one flat
// array of slots, linear probing, power-of-two capacity, grown at 75% load (a good hash keeps
// linear probes short there, and the table stays half the size it would be at 50%). Lookups
// allocate nothing; growth allocates (amortised, once per doubling of the number of distinct
// keys), so memory follows the number of flows, not the number of frames. There is no erase: an
// analysis only ever adds keys. A value-initialised Value must be all zero bytes (counters are).
//
// A slot is a 32-bit tag, the key and the value: with a 12-byte key and a 48-byte value it is
// exactly one cache line, so a lookup costs one miss.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <type_traits>

#include "analysis/zeroed_pages.hpp"

namespace rocehil::capture {

template <class Key, class Value, class Hash, class Eq = std::equal_to<Key>>
class FlatTable {
 public:
  struct SlotFields {
    std::uint32_t tag;  // 0 marks an empty slot; real tags have their low bit forced on
    Key key;
    Value value;
  };
  // Slots of a line or more start on a line, so one costs the fewest lines.
  struct alignas(sizeof(SlotFields) >= 64 ? 64 : alignof(SlotFields)) Slot : SlotFields {};
  static_assert(std::is_trivially_copyable_v<Slot>,
                "slots live in zeroed pages and are copied raw");

  explicit FlatTable(std::size_t initial_capacity = 1024) {
    std::size_t c = 16;
    while (c < initial_capacity) c <<= 1;
    allocate(c);
  }

  // The value for `key`, value-initialised on first sight. The reference is valid until the next
  // insertion of a new key.
  Value& operator[](const Key& key) { return find_or_insert(key, Hash{}(key)); }

  // Starts loading the slot a key with this hash lands on, so that a lookup a few frames later
  // finds it in cache: batches hide the memory latency of tables larger than the caches.
  // The slot after home too: at 75% load a key is past its home slot nearly half the time.
  void prefetch(std::uint64_t hash) const noexcept {
    const std::size_t i = home(hash);
    __builtin_prefetch(&slots_[i]);
    __builtin_prefetch(&slots_[(i + 1) & (capacity_ - 1)]);
  }

  // operator[] with the hash already computed (Hash{}(key)).
  Value& find_or_insert(const Key& key, std::uint64_t hash) {
    const std::uint32_t t = tag(hash);
    std::size_t i = home(hash);
    for (;;) {
      Slot& s = slots_[i];
      if (s.tag == t && Eq{}(s.key, key)) return s.value;
      if (s.tag == 0) break;
      i = (i + 1) & (capacity_ - 1);
    }
    if ((size_ + 1) * 4 > capacity_ * 3) {
      grow();
      i = free_slot_for(hash);
    }
    Slot& s = slots_[i];
    s.tag = t;
    s.key = key;
    ++size_;
    return s.value;
  }

  // The value for `key` if it is in the table.
  const Value* find(const Key& key) const noexcept { return find(key, Hash{}(key)); }
  Value* find(const Key& key) noexcept { return find(key, Hash{}(key)); }
  // find() with the hash already computed (Hash{}(key)).
  const Value* find(const Key& key, std::uint64_t hash) const noexcept {
    const std::uint32_t t = tag(hash);
    for (std::size_t i = home(hash);; i = (i + 1) & (capacity_ - 1)) {
      const Slot& s = slots_[i];
      if (s.tag == t && Eq{}(s.key, key)) return &s.value;
      if (s.tag == 0) return nullptr;
    }
  }
  Value* find(const Key& key, std::uint64_t hash) noexcept {
    return const_cast<Value*>(static_cast<const FlatTable&>(*this).find(key, hash));
  }

  std::size_t size() const noexcept { return size_; }

  template <class F>
  void for_each(F&& f) const {
    for (std::size_t i = 0; i < capacity_; ++i)
      if (slots_[i].tag != 0) f(slots_[i].key, slots_[i].value);
  }
  // for_each with each key's slot, which key_at and value_at read back until the next insertion
  // of a new key: a subset of the keys can be listed once and visited later.
  template <class F>
  void for_each_slot(F&& f) const {
    for (std::size_t i = 0; i < capacity_; ++i)
      if (slots_[i].tag != 0) f(i, slots_[i].key);
  }
  const Key& key_at(std::size_t slot) const noexcept { return slots_[slot].key; }
  const Value& value_at(std::size_t slot) const noexcept { return slots_[slot].value; }

 private:
  // The home slot comes from the high half of the hash, the tag from the low half.
  std::size_t home(std::uint64_t hash) const noexcept {
    return static_cast<std::size_t>(hash >> 32) & (capacity_ - 1);
  }
  static std::uint32_t tag(std::uint64_t hash) noexcept {
    return static_cast<std::uint32_t>(hash) | 1;
  }

  std::size_t free_slot_for(std::uint64_t hash) const noexcept {
    std::size_t i = home(hash);
    while (slots_[i].tag != 0) i = (i + 1) & (capacity_ - 1);
    return i;
  }

  void allocate(std::size_t capacity) {
    memory_ = ZeroedPages(capacity * sizeof(Slot));
    slots_ = static_cast<Slot*>(memory_.data());
    capacity_ = capacity;
  }

  // Rehashing writes every key to a random slot of a table larger than the caches: the homes of
  // a batch of keys are computed and prefetched first, so the misses overlap.
  void grow() {
    ZeroedPages old_memory = std::move(memory_);
    const Slot* old = slots_;
    const std::size_t old_capacity = capacity_;
    allocate(capacity_ * 2);
    constexpr std::size_t batch = 16;
    std::uint64_t hashes[batch];
    const Slot* moving[batch];
    std::size_t n = 0;
    const auto place = [&] {
      for (std::size_t b = 0; b < n; ++b) slots_[free_slot_for(hashes[b])] = *moving[b];
      n = 0;
    };
    for (std::size_t j = 0; j < old_capacity; ++j) {
      if (old[j].tag == 0) continue;
      hashes[n] = Hash{}(old[j].key);
      moving[n] = &old[j];
      __builtin_prefetch(&slots_[home(hashes[n])], 1);
      if (++n == batch) place();
    }
    place();
  }

  ZeroedPages memory_;
  Slot* slots_ = nullptr;
  std::size_t capacity_ = 0;
  std::size_t size_ = 0;
};

// Mixes 64-bit words into a well-spread hash (a multiply-xorshift finaliser, as in splitmix64).
constexpr std::uint64_t mix64(std::uint64_t x) noexcept {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  x ^= x >> 31;
  return x;
}

}  // namespace rocehil::capture
