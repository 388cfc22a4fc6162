// The NIC rate limiter's attributes built from a rate, an MTU and the device's packet pacing
// capabilities, without a device (verbs/rate_limit.hpp names the rdma-core sources).
#include "verbs/rate_limit.hpp"

#include <gtest/gtest.h>

namespace rocehil::traffic::verbs {
namespace {

// What a ConnectX-6 Dx reports (ibv_devinfo -v: packet pacing qp_rate_limit_min 1 kbps,
// qp_rate_limit_max 100000000 kbps).
constexpr PacingCaps connectx{.min_kbps = 1, .max_kbps = 100'000'000, .burst_control = false};

TEST(RateLimitPlan, BitsPerSecondBecomeKbpsAndTheRestIsTheDevicesDefault) {
  const RateLimitPlan p = rate_limit_plan(12.5e9, 4096, connectx);
  ASSERT_EQ(p.refused, "");
  EXPECT_EQ(p.attr.rate_limit, 12'500'000u);
  EXPECT_EQ(p.attr.max_burst_sz, 0u);
  EXPECT_EQ(p.attr.typical_pkt_sz, 0u);  // mlx5 refuses it without MLX5_IB_PP_SUPPORT_BURST
  EXPECT_EQ(p.attr.comp_mask, 0u);       // mlx5 refuses any
}

TEST(RateLimitPlan, RoundsToTheNearestKbps) {
  EXPECT_EQ(rate_limit_plan(1'499, 1024, connectx).attr.rate_limit, 1u);
  EXPECT_EQ(rate_limit_plan(1'500, 1024, connectx).attr.rate_limit, 2u);
  EXPECT_EQ(rate_limit_plan(55e9 / 8, 1024, connectx).attr.rate_limit, 6'875'000u);
}

TEST(RateLimitPlan, WithBurstControlTheTypicalPacketIsTheMtu) {
  PacingCaps caps = connectx;
  caps.burst_control = true;
  const RateLimitPlan p = rate_limit_plan(1e9, 1024, caps);
  EXPECT_EQ(p.attr.typical_pkt_sz, 1024u);
  EXPECT_EQ(p.attr.max_burst_sz, 0u);
}

TEST(RateLimitPlan, ADeviceWithoutPacingIsRefusedWithTheReason) {
  // rxe, and most non-mlx5 devices, report qp_rate_limit_max 0.
  const RateLimitPlan p = rate_limit_plan(1e9, 1024, PacingCaps{});
  EXPECT_NE(p.refused.find("no packet pacing"), std::string::npos) << p.refused;
  EXPECT_EQ(p.attr.rate_limit, 0u);
}

TEST(RateLimitPlan, RatesOutsideTheDevicesRangeAreRefused) {
  const PacingCaps caps{.min_kbps = 1000, .max_kbps = 10'000'000, .burst_control = false};
  EXPECT_NE(rate_limit_plan(100e3, 1024, caps).refused.find("1000..10000000"), std::string::npos);
  EXPECT_NE(rate_limit_plan(20e9, 1024, caps).refused.find("20000000 kbps"), std::string::npos);
  EXPECT_EQ(rate_limit_plan(10e9, 1024, caps).refused, "");
  EXPECT_NE(rate_limit_plan(0, 1024, caps).refused, "");
  EXPECT_NE(rate_limit_plan(-5e6, 1024, caps).refused, "");
  EXPECT_NE(rate_limit_plan(1e16, 1024, connectx).refused, "");
}

}  // namespace
}  // namespace rocehil::traffic::verbs
