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

TEST(Units, DigitsAreGroupedByThousands) {
  EXPECT_EQ(group_digits(0), "0");
  EXPECT_EQ(group_digits(999), "999");
  EXPECT_EQ(group_digits(1000), "1,000");
  EXPECT_EQ(group_digits(123456789), "123,456,789");
  EXPECT_EQ(group_digits(18446744073709551615ULL), "18,446,744,073,709,551,615") << "every digit";
}

TEST(Units, CountsAreGroupedWholeNumbers) {
  EXPECT_EQ(format_count(44329200), "44,329,200");
  EXPECT_EQ(format_count(10890), "10,890");
  EXPECT_EQ(format_count(999), "999");
  EXPECT_EQ(format_count(1000), "1,000");
  EXPECT_EQ(format_count(0), "0");
  EXPECT_EQ(format_count(-1234567), "-1,234,567");
  EXPECT_EQ(format_count(-0.0), "0");
  EXPECT_EQ(format_count(1e18), "1e+18") << "past what a double holds exactly";
  EXPECT_EQ(format_count(0.15432), "0.1543");
}

// What report.html, compare and history print: never an exponent for the numbers people read.
TEST(Units, MeasuredNumbersReadWithoutExponents) {
  EXPECT_EQ(format_number(4.43292e7), "44,329,200");
  EXPECT_EQ(format_number(1.089e4), "10,890");
  EXPECT_EQ(format_number(112200.25), "112,200.3");
  EXPECT_EQ(format_number(10890.54), "10,890.5");
  EXPECT_EQ(format_number(0.25), "0.25");
  EXPECT_EQ(format_number(1.2345), "1.234");
  EXPECT_EQ(format_number(2032), "2,032");
  EXPECT_EQ(format_number(0.154321), "0.1543");
  EXPECT_EQ(format_number(-3.5), "-3.5");
}

TEST(Units, ANounIsPluralUnlessThereIsOne) {
  EXPECT_EQ(count_of(1, "host"), "1 host");
  EXPECT_EQ(count_of(0, "host"), "0 hosts");
  EXPECT_EQ(count_of(2, "case"), "2 cases");
  EXPECT_EQ(count_of(3, "switch"), "3 switches");
}

}  // namespace
}  // namespace rocehil
