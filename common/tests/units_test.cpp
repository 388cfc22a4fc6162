#include "rocehil/common/units.hpp"

#include <gtest/gtest.h>

namespace rocehil {
namespace {

TEST(Units, PauseQuantaAreFiveHundredTwelveBitTimes) {
  EXPECT_DOUBLE_EQ(pause_quanta_to_ns(1, 100), 5.12);
  EXPECT_DOUBLE_EQ(pause_quanta_to_ns(1, 200), 2.56);
  EXPECT_DOUBLE_EQ(pause_quanta_to_ns(1, 400), 1.28);
  // The design's figure: 0xFFFF quanta hold a 100G link for 335.5 us.
  EXPECT_NEAR(pause_quanta_to_ns(0xffff, 100), 335539.2, 1e-6);
}

TEST(Units, Formatting) {
  EXPECT_EQ(format_bytes(512), "512 B");
  EXPECT_EQ(format_bytes(1234567), "1.23 MB");
  EXPECT_EQ(format_si(20.5e6, "pps"), "20.5 Mpps");
  EXPECT_EQ(format_si(0.810426, "hosts/s"), "0.81 hosts/s");
  EXPECT_EQ(format_si(64, "hosts"), "64 hosts");
  EXPECT_EQ(format_duration_ns(95), "95 ns");
  EXPECT_EQ(format_duration_ns(830e3), "830 us");
  EXPECT_EQ(format_duration_ns(12.5e6), "12.5 ms");
  EXPECT_EQ(format_duration_ns(1.2345e9), "1.234 s");
}

}  // namespace
}  // namespace rocehil
