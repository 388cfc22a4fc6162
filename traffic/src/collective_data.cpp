#include "rocehil/traffic/collective_data.hpp"

#include <algorithm>
#include <cstring>

#include "rocehil/common/crc32.hpp"

namespace rocehil::traffic {

namespace {

// Input byte i of a rank: byte i % 8 of a 64-bit word hashed from (rank, i / 8), so filling and
// predicting go a word at a time.
std::uint64_t input_word(int rank, std::uint64_t word) {
  std::uint64_t x = (static_cast<std::uint64_t>(rank) << 40) ^ word ^ 0x5851f42d4c957f2dull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

std::byte input_byte(int rank, std::uint64_t offset) {
  return static_cast<std::byte>(input_word(rank, offset / 8) >> (8 * (offset % 8)));
}

// `out[0, bytes)` = rank's input bytes at [offset, offset + bytes); applies `op` per byte.
template <typename Op>
void input_into(int rank, std::uint64_t offset, std::span<std::byte> out, Op op) {
  std::uint64_t i = 0;
  while (i < out.size() && (offset + i) % 8 != 0) {
    op(out[i], input_byte(rank, offset + i));
    ++i;
  }
  for (; i + 8 <= out.size(); i += 8) {
    const std::uint64_t w = input_word(rank, (offset + i) / 8);
    for (int b = 0; b < 8; ++b) op(out[i + b], static_cast<std::byte>(w >> (8 * b)));
  }
  for (; i < out.size(); ++i) op(out[i], input_byte(rank, offset + i));
}

constexpr auto assign = [](std::byte& to, std::byte v) { to = v; };
constexpr auto xor_in = [](std::byte& to, std::byte v) { to ^= v; };

std::uint32_t crc_of_ranges(const std::vector<CollectivePlan::Range>& ranges,
                            std::span<const std::byte> region) {
  std::uint32_t state = crc32_init;
  for (const auto& r : ranges) {
    const auto part = region.subspan(r.offset, r.bytes);
    state = crc32_update(state, {reinterpret_cast<const std::uint8_t*>(part.data()), part.size()});
  }
  return crc32_final(state);
}

}  // namespace

void fill_inputs(const CollectivePlan& plan, int rank, std::span<std::byte> region) {
  for (const auto& in : plan.inputs(rank))
    input_into(rank, in.offset, region.subspan(in.offset, in.bytes), assign);
}

std::uint32_t output_crc32(const CollectivePlan& plan, int rank,
                           std::span<const std::byte> region) {
  return crc_of_ranges(plan.outputs(rank), region);
}

std::vector<std::optional<std::uint32_t>> expected_output_crc32s(const CollectivePlan& plan) {
  const int n = plan.ranks();
  const std::uint64_t b = plan.bytes();
  std::vector<std::optional<std::uint32_t>> crcs(static_cast<std::size_t>(n));
  std::vector<std::byte> region(plan.region_bytes());
  const std::span<std::byte> message(region.data(), b);
  switch (plan.pattern()) {
    case Pattern::ring_allreduce:
    case Pattern::tree_allreduce:
    case Pattern::hierarchical_allreduce:
    case Pattern::ring_reduce_scatter:
      // Everyone's message XORed; each rank's outputs are ranges of it.
      std::fill(region.begin(), region.end(), std::byte{0});
      for (int r = 0; r < n; ++r) input_into(r, 0, message, xor_in);
      for (int r = 0; r < n; ++r) crcs[static_cast<std::size_t>(r)] = output_crc32(plan, r, region);
      return crcs;
    case Pattern::ring_allgather:
      // Chunk c of the result is rank c's input, which is chunk c.
      for (int r = 0; r < n; ++r)
        for (const auto& in : plan.inputs(r))
          input_into(r, in.offset, message.subspan(in.offset, in.bytes), assign);
      for (int r = 0; r < n; ++r) crcs[static_cast<std::size_t>(r)] = output_crc32(plan, r, region);
      return crcs;
    case Pattern::broadcast:
      input_into(0, 0, message, assign);
      for (int r = 0; r < n; ++r) crcs[static_cast<std::size_t>(r)] = output_crc32(plan, r, region);
      return crcs;
    case Pattern::alltoall:
    case Pattern::permutation:
    case Pattern::pairwise: {
      // One hop: what lands was the sender's own input; later rounds overwrite earlier ones.
      Step s;
      for (int r = 0; r < n; ++r) {
        for (int i = 0; i < plan.steps(r); ++i) {
          plan.step(r, i, s);
          for (const auto& t : s.receives)
            input_into(t.peer, t.src_offset, std::span(region).subspan(t.dst_offset, t.bytes),
                       assign);
        }
        crcs[static_cast<std::size_t>(r)] = output_crc32(plan, r, region);
      }
      return crcs;
    }
    case Pattern::incast: return crcs;
  }
  return crcs;
}

}  // namespace rocehil::traffic
