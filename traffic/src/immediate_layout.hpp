#pragma once

// The 32-bit immediate of a collective's RDMA WRITE_WITH_IMM: the step of the iteration the data
// belongs to (high bits) and which share of the transfer it is (low bits), so the receiver knows
// where to reduce it without a message of its own. Both ends build the layout from the same QP
// scaling, so they agree on the split without telling each other.
//
// The share field is at least 8 bits, which keeps the layout every run up to 256 QPs per
// connection had (step << 8 | share); more QPs widen it to the bits that hold qps - 1 (14 for
// 16384), and the steps one iteration may have shrink to what is left (2^18 then).
#include <algorithm>
#include <bit>
#include <cstdint>

namespace rocehil::traffic {

class ImmediateLayout {
 public:
  static constexpr std::uint32_t min_share_bits = 8;
  // One share per QP of the connection: a split transfer's share index is below qps.
  explicit constexpr ImmediateLayout(std::uint32_t qps)
      : share_bits_(std::max<std::uint32_t>(
            min_share_bits, static_cast<std::uint32_t>(std::bit_width(qps > 0 ? qps - 1 : 0u)))) {}

  constexpr std::uint32_t share_bits() const { return share_bits_; }
  // Shares a transfer may have, and steps an iteration may have, that the immediate tells apart.
  constexpr std::uint64_t max_shares() const { return std::uint64_t{1} << share_bits_; }
  constexpr std::uint64_t max_steps() const { return std::uint64_t{1} << (32 - share_bits_); }

  // `step` < max_steps() and `share` < max_shares(): the caller checked the plan once.
  // (64-bit shifts: a share field of all 32 bits, for 2^31+ QPs, leaves no step bits.)
  constexpr std::uint32_t encode(std::uint32_t step, std::uint32_t share) const {
    return static_cast<std::uint32_t>(std::uint64_t{step} << share_bits_ | share);
  }
  constexpr std::uint32_t step(std::uint32_t imm) const {
    return static_cast<std::uint32_t>(std::uint64_t{imm} >> share_bits_);
  }
  constexpr std::uint32_t share(std::uint32_t imm) const {
    return static_cast<std::uint32_t>(imm & (max_shares() - 1));
  }

 private:
  std::uint32_t share_bits_;
};

}  // namespace rocehil::traffic
