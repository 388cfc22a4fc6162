// `rate:` as a suite writes it: shares of the link and absolute rates, and what is refused.
#include "rocehil/suites/rate.hpp"

#include <gtest/gtest.h>

#include "suite_errors.hpp"

namespace rocehil::suites {
namespace {

Rate parsed(std::string_view text) {
  std::string why;
  const auto r = parse_rate(text, why);
  EXPECT_TRUE(r) << text << ": " << why;
  return r.value_or(Rate{});
}

std::string refused(std::string_view text) {
  std::string why;
  EXPECT_FALSE(parse_rate(text, why)) << text;
  return why;
}

TEST(Rate, ASharePercentOfTheLink) {
  const Rate r = parsed("55%");
  EXPECT_TRUE(r.percent);
  EXPECT_DOUBLE_EQ(r.value, 55);
  EXPECT_DOUBLE_EQ(r.bits_per_s(100e9), 55e9);
  EXPECT_DOUBLE_EQ(parsed("12.5%").bits_per_s(1e9), 125e6);
  EXPECT_EQ(parsed("100%").text, "100%");
}

TEST(Rate, AbsoluteRatesAreDecimalAsLinksAreRated) {
  EXPECT_DOUBLE_EQ(parsed("25Gbit/s").bits_per_s(1), 25e9);
  EXPECT_DOUBLE_EQ(parsed("400Mbit/s").bits_per_s(100e9), 400e6);  // the link does not matter
  EXPECT_DOUBLE_EQ(parsed("100Kbit/s").value, 100e3);
  EXPECT_DOUBLE_EQ(parsed("2500000bit/s").value, 2.5e6);
  EXPECT_DOUBLE_EQ(parsed("1.6Tbit/s").value, 1.6e12);
  EXPECT_FALSE(parsed("25Gbit/s").percent);
}

TEST(Rate, WhatIsNotARateSaysWhatIs) {
  EXPECT_NE(refused("fast").find("such as 55%"), std::string::npos);
  EXPECT_NE(refused("25Gbps").find("'Gbps' is not a unit of rate"), std::string::npos);
  EXPECT_NE(refused("25").find("'' is not a unit"), std::string::npos);
  EXPECT_NE(refused("0%").find("more than 0%"), std::string::npos);
  EXPECT_NE(refused("120%").find("at most 100%"), std::string::npos);
  EXPECT_NE(refused("-5Gbit/s").find("from 1Kbit/s"), std::string::npos);
  EXPECT_NE(refused("2Tbit/s").find("to 1.6Tbit/s"), std::string::npos);
  EXPECT_NE(refused("nan%").find("a number with a unit"), std::string::npos);
}

TEST(Rate, ASuiteRefusesABadRateAtItsPlace) {
  EXPECT_EQ(testing::errors_of("schema_version: 1\nname: x\ntests:\n  - name: bw\n    "
                               "workload: bw\n    rate: 25Gbps\n"),
            std::vector<std::string>{
                "s.yaml:6:11: test 'bw': rate: 'Gbps' is not a unit of rate; write %, Kbit/s, "
                "Mbit/s, Gbit/s or Tbit/s, such as 55% (of the sender's link), 25Gbit/s or "
                "400Mbit/s"});
}

}  // namespace
}  // namespace rocehil::suites
