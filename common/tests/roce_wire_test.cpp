#include "rocehil/common/roce_wire.hpp"

#include <gtest/gtest.h>

namespace rocehil::wire {
namespace {

TEST(RoceWire, PsnArithmeticWrapsAt24Bits) {
  EXPECT_EQ(psn_add(0xfffffe, 3), 1u);
  EXPECT_EQ(psn_add(0, 0xffffff), 0xffffffu);  // one step back
  EXPECT_EQ(psn_distance(0xfffffe, 1), 3);
  EXPECT_EQ(psn_distance(1, 0xfffffe), -3);
  EXPECT_EQ(psn_distance(5, 5), 0);
}

TEST(RoceWire, PacketsForALength) {
  EXPECT_EQ(packets_for_length(0, 1024), 1u);
  EXPECT_EQ(packets_for_length(1, 1024), 1u);
  EXPECT_EQ(packets_for_length(1024, 1024), 1u);
  EXPECT_EQ(packets_for_length(1025, 1024), 2u);
  EXPECT_EQ(packets_for_length(1u << 20, 4096), 256u);
}

}  // namespace
}  // namespace rocehil::wire
