// perftest's software rate limiter in the command rocehil builds: the flags and units perftest
// 4.5 (Debian 12) takes, and what it would refuse, refused first with the setting's name.
#include <gtest/gtest.h>

#include <algorithm>

#include "rocehil/common/error.hpp"
#include "rocehil/perftest/command.hpp"

namespace rocehil::perftest {
namespace {

CommandOptions paced_write_bw() {
  CommandOptions o;
  o.tool = Tool::write_bw;
  o.size = 65536;
  o.qps = 4;
  o.seconds = 5;
  o.server = "198.18.1.2";
  o.rate_gbps = 0.5;
  return o;
}

bool has(const std::vector<std::string>& words, const std::string& word) {
  return std::find(words.begin(), words.end(), word) != words.end();
}

TEST(PerftestRate, PacedRunsCarryRateUnitsAndTheSoftwareLimiter) {
  const auto w = command_words(paced_write_bw());
  EXPECT_TRUE(has(w, "--rate_limit=0.5")) << testing::PrintToString(w);
  EXPECT_TRUE(has(w, "--rate_units=g"));
  EXPECT_TRUE(has(w, "--rate_limit_type=SW"));
  // The server's address stays the last word, after the flags.
  EXPECT_EQ(w.back(), "198.18.1.2");
}

TEST(PerftestRate, UnpacedRunsHaveNoRateFlags) {
  CommandOptions o = paced_write_bw();
  o.rate_gbps = 0;
  for (const auto& word : command_words(o)) EXPECT_EQ(word.find("--rate"), std::string::npos);
}

TEST(PerftestRate, RatesPrintAsPerftestsAtofReadsThem) {
  CommandOptions o = paced_write_bw();
  o.rate_gbps = 12.5;
  EXPECT_TRUE(has(command_words(o), "--rate_limit=12.5"));
  o.rate_gbps = 25;
  EXPECT_TRUE(has(command_words(o), "--rate_limit=25"));
}

TEST(PerftestRate, RefusesWhatPerftestsLimiterRefuses) {
  const auto refused = [](CommandOptions o, const char* needle) {
    try {
      (void)command_words(o);
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
      return;
    }
    ADD_FAILURE() << "not refused: " << needle;
  };
  CommandOptions lat = paced_write_bw();
  lat.tool = Tool::write_lat;
  lat.qps = 1;
  lat.seconds = 0;
  lat.iterations = 1000;
  refused(lat, "bandwidth tests only");
  CommandOptions bisend = paced_write_bw();
  bisend.tool = Tool::send_bw;
  bisend.bidirectional = true;
  refused(bisend, "bidirectional SEND");
  CommandOptions slow = paced_write_bw();
  slow.rate_gbps = 1e-7;  // 100 bit/s of 64 KiB messages
  refused(slow, "under one 65536-byte message a second");
  CommandOptions negative = paced_write_bw();
  negative.rate_gbps = -1;
  refused(negative, "out of range");
  // A bidirectional WRITE paces both directions: perftest takes it.
  CommandOptions biwrite = paced_write_bw();
  biwrite.bidirectional = true;
  EXPECT_TRUE(has(command_words(biwrite), "--rate_limit_type=SW"));
}

}  // namespace
}  // namespace rocehil::perftest
