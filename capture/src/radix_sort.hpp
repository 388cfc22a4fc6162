#pragma once

// A least-significant-digit radix sort for the report's flow order. At 100k+ flows a comparison
// sort spends most of its time on mispredicted branches (the comparisons of random keys go either
// way); counting and scattering by one byte of the key at a time has no such branches, and key
// bytes that are the same in every record (the high bytes of small counters, the network part of
// addresses) cost no pass at all.

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <type_traits>
#include <utility>
#include <vector>

#include "zeroed_pages.hpp"

namespace rocehil::capture {

// Sorts `records` ascending by key_of(record): an std::array of 64-bit words, the most
// significant first. Stable; allocates one scratch copy of the records.
template <class T, class KeyOf>
void radix_sort(std::vector<T>& records, KeyOf key_of) {
  static_assert(std::is_trivially_copyable_v<T>, "records are moved as bytes between buffers");
  using Key = decltype(key_of(records.front()));
  constexpr std::size_t words = std::tuple_size_v<Key>;
  const std::size_t n = records.size();
  if (n < 2) return;

  // The bits that differ somewhere: a byte where none does is already sorted.
  Key all_and, all_or;
  all_and.fill(~std::uint64_t{0});
  all_or.fill(0);
  for (const T& r : records) {
    const Key k = key_of(r);
    for (std::size_t w = 0; w < words; ++w) {
      all_and[w] &= k[w];
      all_or[w] |= k[w];
    }
  }

  std::unique_ptr<T[]> scratch(new T[n]);
  prepare_pages(scratch.get(), n * sizeof(T));
  T* from = records.data();
  T* to = scratch.get();
  for (std::size_t w = words; w-- > 0;) {
    const std::uint64_t differs = all_and[w] ^ all_or[w];
    for (unsigned shift = 0; shift < 64; shift += 8) {
      if (((differs >> shift) & 0xff) == 0) continue;
      std::array<std::size_t, 256> place{};
      for (std::size_t i = 0; i < n; ++i) ++place[(key_of(from[i])[w] >> shift) & 0xff];
      std::size_t at = 0;
      for (std::size_t& p : place) at += std::exchange(p, at);
      for (std::size_t i = 0; i < n; ++i)
        to[place[(key_of(from[i])[w] >> shift) & 0xff]++] = from[i];
      std::swap(from, to);
    }
  }
  if (from != records.data()) std::copy(from, from + n, records.data());
}

}  // namespace rocehil::capture
