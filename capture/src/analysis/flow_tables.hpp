#pragma once

// The analyzer's per-flow tables, shared by the per-frame path (analyzer.cpp) and the report
// (flow_report.cpp): flow keys as captured, each flow's counters, and the tables holding them.

#include <array>
#include <cstdint>
#include <cstring>

#include "analysis/flat_table.hpp"
#include "rocehil/common/byte_order.hpp"

namespace rocehil::capture {

// Flow keys as the per-frame path builds them: address bytes as captured, no conversion. IPv4
// flows (nearly all) get a 12-byte key, so their table slot is one cache line; IPv6 flows have
// a table of their own. A FlowKey (IpAddress) is made once per flow, in result().
struct V4Key {
  std::uint32_t src = 0;
  std::uint32_t dst = 0;
  std::uint32_t dest_qp = 0;
  bool operator==(const V4Key&) const = default;

  static V4Key of(const std::uint8_t* ip, std::uint32_t dest_qp) {
    V4Key k;
    std::memcpy(&k.src, ip + 12, 4);
    std::memcpy(&k.dst, ip + 16, 4);
    k.dest_qp = dest_qp;
    return k;
  }
  // The addresses as the report orders them: IpAddress bytes (::ffff:a.b.c.d) as big-endian
  // words, source high, source low, destination high, destination low.
  std::array<std::uint64_t, 4> order_words() const noexcept {
    constexpr std::uint64_t v4_mapped = std::uint64_t{0xffff} << 32;
    return {0, v4_mapped | load_be32(reinterpret_cast<const std::uint8_t*>(&src)), 0,
            v4_mapped | load_be32(reinterpret_cast<const std::uint8_t*>(&dst))};
  }
  // Both addresses as one number: source high, destination low (V4FlowOrder).
  std::uint64_t order_word() const noexcept {
    return std::uint64_t{load_be32(reinterpret_cast<const std::uint8_t*>(&src))} << 32 |
           load_be32(reinterpret_cast<const std::uint8_t*>(&dst));
  }
  std::uint64_t hash() const noexcept {
    return mix64((std::uint64_t{src} << 32 | dst) * 0x9e3779b97f4a7c15ull + dest_qp);
  }
};

struct V6Key {
  std::uint64_t words[4] = {};  // source then destination address
  std::uint32_t dest_qp = 0;
  bool operator==(const V6Key&) const = default;

  static V6Key of(const std::uint8_t* ip, std::uint32_t dest_qp) {
    V6Key k;
    std::memcpy(k.words, ip + 8, 32);
    k.dest_qp = dest_qp;
    return k;
  }
  std::array<std::uint64_t, 4> order_words() const noexcept {
    const auto* b = reinterpret_cast<const std::uint8_t*>(words);
    return {load_be64(b), load_be64(b + 8), load_be64(b + 16), load_be64(b + 24)};
  }
  std::uint64_t hash() const noexcept {
    // Independent multiplies (they run in parallel), then one finaliser.
    return mix64(words[0] * 0x9e3779b97f4a7c15ull + words[1] * 0xc2b2ae3d27d4eb4full +
                 words[2] * 0x165667b19e3779f9ull + words[3] * 0x27d4eb2f165667c5ull + dest_qp);
  }
};

template <class Key>
struct KeyHash {
  std::uint64_t operator()(const Key& k) const noexcept { return k.hash(); }
};

struct QpHash {
  std::uint64_t operator()(std::uint32_t qp) const noexcept { return mix64(qp); }
};

// What every packet of a flow touches: with the slot's tag and a V4Key, one cache line.
struct FlowState {
  // Three fields in one word, read once and written once per request:
  // - bits 0-23: the highest PSN the flow has sent;
  // - bits 24-47: the PSNs the request at that PSN occupies: 1, or a READ REQUEST's response
  //   packets (at most 2^24 - 1: no PSN is ever more than 2^23 ahead); 0 until the first request;
  // - bits 48-63: the UDP source port of the flow's first packet, in the bits the PSNs leave (a
  //   second table for it cost 13-20 % of the frame rate at 178k flows: bench/RESULTS.md).
  // As bit-fields, the two PSN stores compiled to a 32-bit store and then a 64-bit load of the
  // same word, which the CPU cannot forward from the store: ~9 % of Analyzer::add's time.
  std::uint64_t psn_word = 0;
  std::uint64_t packets = 0;
  std::uint64_t bytes = 0;
  std::uint64_t ecn_ce = 0;
  std::uint64_t first_ns = 0;
  std::uint64_t last_ns = 0;

  static constexpr std::uint64_t sport_bits = std::uint64_t{0xffff} << 48;

  std::uint32_t highest_psn() const noexcept {
    return static_cast<std::uint32_t>(psn_word & 0xffffff);
  }
  std::uint32_t highest_span() const noexcept {
    return static_cast<std::uint32_t>(psn_word >> 24 & 0xffffff);
  }
  std::uint16_t udp_sport() const noexcept { return static_cast<std::uint16_t>(psn_word >> 48); }
  // Both are 24-bit quantities already (a PSN is 24 bits, a span is clamped): the masks say so.
  void set_highest(std::uint32_t psn, std::uint32_t span) noexcept {
    psn_word = (psn_word & sport_bits) | std::uint64_t{span & 0xffffff} << 24 | (psn & 0xffffff);
  }
  void set_highest_from(const FlowState& other) noexcept {
    psn_word = (psn_word & sport_bits) | (other.psn_word & ~sport_bits);
  }
};

// What only a loss or a NAK touches, kept apart so that healthy traffic never loads it.
struct FlowEvents {
  std::uint64_t psn_gaps = 0;
  std::uint64_t retransmits = 0;
  std::uint64_t naks = 0;
};

static_assert(sizeof(FlatTable<V4Key, FlowState, KeyHash<V4Key>>::Slot) == 64,
              "an IPv4 flow's slot is one cache line");

// A family's flows: the state every packet touches, and the counts only a loss or a NAK does.
template <class Key>
struct FlowTables {
  FlowTables() = default;
  // Room for `flows` flows before the state table first grows.
  explicit FlowTables(std::size_t flows) : state(flows + flows / 3 + 1) {}

  FlatTable<Key, FlowState, KeyHash<Key>> state;
  FlatTable<Key, FlowEvents, KeyHash<Key>> events{16};
};

}  // namespace rocehil::capture
