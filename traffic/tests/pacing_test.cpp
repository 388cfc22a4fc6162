// Engine pacing's token bucket on a clock the test moves: what a sender that posts whenever the
// bucket lets it gets through in a given time, counted here message by message.
#include "rocehil/traffic/pacing.hpp"

#include <gtest/gtest.h>

namespace rocehil::traffic {
namespace {

// Takes `bits` whenever allowed, stepping the clock by `step_ns` over [start, end); returns the
// bits taken.
double saturate(TokenBucket& bucket, double bits, std::uint64_t start, std::uint64_t end,
                std::uint64_t step_ns = 1000) {
  double taken = 0;
  for (std::uint64_t now = start; now < end; now += step_ns)
    while (bucket.try_take(bits, now)) taken += bits;
  return taken;
}

TEST(TokenBucket, UnpacedTakesEverything) {
  TokenBucket bucket;
  EXPECT_FALSE(bucket.paced());
  for (int i = 0; i < 1000; ++i) ASSERT_TRUE(bucket.try_take(1e9, 0));
  EXPECT_EQ(bucket.wait_ns(1e9, 0), 0u);
}

TEST(TokenBucket, ASaturatingSenderGetsTheRateAndNoMore) {
  // 500 Mbit/s, 64 KiB messages (524,288 bits), the burst pacing_burst_bits gives them.
  const double rate = 500e6, bits = 8.0 * 65536;
  const double burst = pacing_burst_bits(rate, 65536);
  EXPECT_DOUBLE_EQ(burst, 2.5e6);  // 5 ms at 500 Mbit/s: more than two messages (1,048,576)
  TokenBucket bucket(rate, burst);
  const std::uint64_t second = 1'000'000'000;
  const double taken = saturate(bucket, bits, 0, second);
  // The second's worth plus the starting burst, give or take one message.
  EXPECT_LE(taken, rate + burst + bits);
  EXPECT_GE(taken, rate - bits);
}

TEST(TokenBucket, SmallMessagesAtAHighRateHoldItToo) {
  // 25 Gbit/s of 4 KiB messages: the burst is 5 ms at the rate (125,000,000 bits).
  const double rate = 25e9, bits = 8.0 * 4096;
  const double burst = pacing_burst_bits(rate, 4096);
  EXPECT_DOUBLE_EQ(burst, 1.25e8);
  TokenBucket bucket(rate, burst);
  const double taken = saturate(bucket, bits, 7'000, 7'000 + 100'000'000, 100);  // 0.1 s
  EXPECT_LE(taken, rate / 10 + burst + bits);
  EXPECT_GE(taken, rate / 10 - bits);
}

TEST(TokenBucket, AnIdleSenderGetsOneBurstNotTheTimeItWasIdle) {
  TokenBucket bucket(1e9, 1e6);  // 1 Gbit/s, 1 Mbit burst
  (void)saturate(bucket, 1e5, 0, 1'000'000);
  // Idle for ten seconds: ten messages of the burst at once, then nothing at that instant.
  int at_once = 0;
  EXPECT_DOUBLE_EQ(bucket.overflowed_bits(), 0);  // a saturating sender loses nothing
  while (bucket.try_take(1e5, 11'000'000'000)) ++at_once;
  EXPECT_EQ(at_once, 10);
  // The idle 10.999 s of rate, but for what refilled the burst, was lost to a full bucket. The
  // saturated millisecond left 0 to 1e5 bits (less than a message) in it.
  EXPECT_GE(bucket.overflowed_bits(), 10.999e9 - 1e6);
  EXPECT_LE(bucket.overflowed_bits(), 10.999e9 - 1e6 + 1e5);
}

TEST(TokenBucket, AMessageLargerThanTheBurstLeavesWhenFullAndIsPaidFor) {
  // 1 Mbit messages through a 0.1 Mbit bucket at 10 Mbit/s: one every 100 ms on average.
  TokenBucket bucket(10e6, 1e5);
  int sent = 0;
  for (std::uint64_t now = 0; now < 1'000'000'000; now += 1'000'000)
    while (bucket.try_take(1e6, now)) ++sent;
  EXPECT_GE(sent, 10);
  EXPECT_LE(sent, 11);
}

TEST(TokenBucket, WaitSaysWhenTheNextMessageMayGo) {
  TokenBucket bucket(8e6, 8000);  // 8 Mbit/s: 1 bit per 125 ns; one 1000-byte message of burst
  ASSERT_TRUE(bucket.try_take(8000, 1'000'000));
  EXPECT_FALSE(bucket.try_take(8000, 1'000'000));
  const std::uint64_t wait = bucket.wait_ns(8000, 1'000'000);
  EXPECT_NEAR(static_cast<double>(wait), 1e6, 2);  // 8000 bits at 8 Mbit/s: 1 ms
  EXPECT_FALSE(bucket.try_take(8000, 1'000'000 + wait - 10));
  EXPECT_TRUE(bucket.try_take(8000, 1'000'000 + wait + 10));
}

TEST(TokenBucket, TokensPutBackAreTakenAgainButNeverOverfillIt) {
  TokenBucket bucket(8e6, 16000);
  ASSERT_TRUE(bucket.try_take(8000, 0));
  ASSERT_TRUE(bucket.try_take(8000, 0));
  EXPECT_FALSE(bucket.try_take(8000, 0));
  bucket.put_back(8000);  // the queue refused the second
  EXPECT_TRUE(bucket.try_take(8000, 0));
  bucket.put_back(1e9);  // more than it holds: full, and no more
  EXPECT_TRUE(bucket.try_take(8000, 0));
  EXPECT_TRUE(bucket.try_take(8000, 0));
  EXPECT_FALSE(bucket.try_take(8000, 0));
}

TEST(TokenBucket, AClockThatStepsBackAddsNothing) {
  TokenBucket bucket(8e6, 8000);
  ASSERT_TRUE(bucket.try_take(8000, 5'000'000));
  EXPECT_FALSE(bucket.try_take(8000, 1'000'000));
  EXPECT_FALSE(bucket.try_take(8000, 5'000'000));
  EXPECT_TRUE(bucket.try_take(8000, 6'000'001));
}

// A sender woken 8 ms late at 150 Mbit/s: a 5 ms burst throws away 3 ms of rate each time; a
// burst widened to twice the gap keeps it all.
TEST(TokenBucket, ABurstWidenedForLateWakeUpsLosesNothingToThem) {
  const double rate = 150e6, bits = 8.0 * 16384;
  for (const bool widen : {false, true}) {
    TokenBucket bucket(rate, pacing_burst_bits(rate, 16384));
    double taken = 0;
    std::uint64_t last = 0;
    for (std::uint64_t now = 0; now <= 1'000'000'000; now += 8'000'000) {  // a turn every 8 ms
      if (widen && now > 0) bucket.widen_burst(burst_for_gap(rate, now - last));
      last = now;
      while (bucket.try_take(bits, now)) taken += bits;
    }
    if (widen) {
      EXPECT_DOUBLE_EQ(bucket.burst_bits(), 2 * 8e-3 * rate);
      EXPECT_GE(taken, rate - bits);  // the second's rate, give or take a message
      EXPECT_LE(taken, rate + bucket.burst_bits());
    } else {
      EXPECT_LT(taken, 0.7 * rate);  // 5 of every 8 ms
      EXPECT_GT(bucket.overflowed_bits(), 0.3 * rate);
    }
  }
  // Widening is capped at 50 ms of the rate, and never narrows.
  EXPECT_DOUBLE_EQ(burst_for_gap(1e9, 1'000'000'000), 50e-3 * 1e9);
  TokenBucket b(1e9, 1e7);
  b.widen_burst(1e6);
  EXPECT_EQ(b.burst_bits(), 1e7);
}

TEST(PacingMethod, NamesRoundTrip) {
  for (const auto m : {PacingMethod::nic, PacingMethod::engine, PacingMethod::perftest})
    EXPECT_EQ(pacing_method_named(to_string(m)), m);
  EXPECT_FALSE(pacing_method_named("hw"));
}

}  // namespace
}  // namespace rocehil::traffic
