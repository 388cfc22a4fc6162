// The collective's immediate: step and share packed in 32 bits, the split chosen from the QPs per
// connection.
#include "immediate_layout.hpp"

#include <gtest/gtest.h>

#include <cstdint>

namespace rocehil::traffic {
namespace {

TEST(ImmediateLayout, UpTo256QpsKeepsTheEightBitShareField) {
  for (const std::uint32_t qps : {1u, 2u, 255u, 256u}) {
    const ImmediateLayout l(qps);
    EXPECT_EQ(l.share_bits(), 8u) << qps;
    EXPECT_EQ(l.max_steps(), 1u << 24) << qps;
    // Byte for byte what a peer built before the field could widen: step << 8 | share.
    EXPECT_EQ(l.encode(0x123456, 0xab), 0x123456abu) << qps;
    EXPECT_EQ(l.encode(1, 0), 0x100u) << qps;
  }
}

TEST(ImmediateLayout, MoreQpsWidenTheShareFieldToHoldQpsMinusOne) {
  EXPECT_EQ(ImmediateLayout(257).share_bits(), 9u);
  EXPECT_EQ(ImmediateLayout(512).share_bits(), 9u);
  EXPECT_EQ(ImmediateLayout(513).share_bits(), 10u);
  EXPECT_EQ(ImmediateLayout(4096).share_bits(), 12u);
  EXPECT_EQ(ImmediateLayout(16384).share_bits(), 14u);
  EXPECT_EQ(ImmediateLayout(16385).share_bits(), 15u);
  EXPECT_EQ(ImmediateLayout(16384).max_steps(), 1u << 18);
  EXPECT_EQ(ImmediateLayout(16384).max_shares(), 16384u);
  EXPECT_EQ(ImmediateLayout(257).max_steps(), 1u << 23);
}

TEST(ImmediateLayout, EveryStepAndShareComesBackAtTheLimits) {
  for (const std::uint32_t qps : {1u, 256u, 257u, 1024u, 16384u}) {
    const ImmediateLayout l(qps);
    const auto last_step = static_cast<std::uint32_t>(l.max_steps() - 1);
    const std::uint32_t last_share = qps - 1;
    for (const std::uint32_t step : {0u, 1u, last_step / 2, last_step})
      for (const std::uint32_t share : {0u, last_share / 2, last_share}) {
        const std::uint32_t imm = l.encode(step, share);
        EXPECT_EQ(l.step(imm), step) << qps << " " << step << " " << share;
        EXPECT_EQ(l.share(imm), share) << qps << " " << step << " " << share;
      }
    // The last step with the last share fills the 32 bits: nothing of either spills.
    const std::uint32_t full = l.encode(last_step, static_cast<std::uint32_t>(l.max_shares() - 1));
    EXPECT_EQ(full, 0xffffffffu) << qps;
  }
}

}  // namespace
}  // namespace rocehil::traffic
