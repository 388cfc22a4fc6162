#include "rocehil/common/clock.hpp"

#include <gtest/gtest.h>

#include <chrono>

namespace rocehil {
namespace {

TEST(Clock, WallClockIsTheSystemClock) {
  const auto before = std::chrono::duration_cast<std::chrono::nanoseconds>(
                          std::chrono::system_clock::now().time_since_epoch())
                          .count();
  const std::int64_t ours = wall_clock_ns();
  const auto after = std::chrono::duration_cast<std::chrono::nanoseconds>(
                         std::chrono::system_clock::now().time_since_epoch())
                         .count();
  EXPECT_LE(before, ours);
  EXPECT_LE(ours, after);
}

TEST(Clock, MonotonicNeverGoesBack) {
  std::int64_t last = monotonic_ns();
  for (int i = 0; i < 1000; ++i) {
    const std::int64_t now = monotonic_ns();
    ASSERT_GE(now, last);
    last = now;
  }
  EXPECT_GT(last, 0);
}

}  // namespace
}  // namespace rocehil
