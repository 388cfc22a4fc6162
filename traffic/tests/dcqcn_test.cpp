#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>

#include "soft/cnp_limiter.hpp"
#include "soft/dcqcn.hpp"

namespace rocehil::traffic::soft {
namespace {

constexpr std::uint64_t us(std::uint64_t microseconds) {
  return microseconds * 1000;
}

// The defaults, except a line rate that keeps the arithmetic in the comments readable.
DcqcnParameters parameters_at(double line_rate_mbps) {
  DcqcnParameters parameters;
  parameters.line_rate_mbps = line_rate_mbps;
  return parameters;
}

// alpha after a cut, written out from the DCQCN update rule rather than taken from the class.
double alpha_after_cut(double alpha_before, double gain) {
  return (1.0 - gain) * alpha_before + gain;
}

constexpr double default_gain = 1019.0 / 1024.0;
constexpr double default_initial_alpha = 1023.0 / 1024.0;

TEST(DcqcnReactionPoint, StartsUnlimitedAtLineRate) {
  DcqcnReactionPoint rp(parameters_at(100'000));
  EXPECT_FALSE(rp.limited());
  EXPECT_EQ(rp.current_rate_mbps(), 100'000.0);
  EXPECT_EQ(rp.target_rate_mbps(), 100'000.0);
  EXPECT_EQ(rp.alpha(), default_initial_alpha);
  // With no CNP, neither time nor traffic moves anything.
  rp.on_bytes_sent(1'000'000'000, us(10));
  rp.advance(us(1'000'000));
  EXPECT_FALSE(rp.limited());
  EXPECT_EQ(rp.current_rate_mbps(), 100'000.0);
  EXPECT_EQ(rp.cnps_handled(), 0u);
  EXPECT_EQ(rp.rate_cuts(), 0u);
}

TEST(DcqcnReactionPoint, DefaultParametersAreValidAndBadOnesAreNamed) {
  EXPECT_TRUE(DcqcnParameters{}.invalid_reason().empty());
  DcqcnParameters bad_gd;
  bad_gd.rpg_gd = 16;
  EXPECT_FALSE(bad_gd.invalid_reason().empty());
  DcqcnParameters bad_fac;
  bad_fac.rpg_min_dec_fac_percent = 0;
  EXPECT_FALSE(bad_fac.invalid_reason().empty());
  DcqcnParameters bad_line;
  bad_line.line_rate_mbps = 0;
  EXPECT_FALSE(bad_line.invalid_reason().empty());
}

TEST(DcqcnReactionPoint, OneCnpCutsByHalfAlpha) {
  DcqcnReactionPoint rp(parameters_at(100'000));
  rp.on_cnp(us(7));
  // alpha starts at 1023/1024; RPG_GD 11 makes the cut alpha/2 = 1023/2048:
  // 100000 * (1 - 1023/2048) = 100000 * 1025/2048 = 50048.828125 Mb/s, about half.
  EXPECT_DOUBLE_EQ(rp.current_rate_mbps(), 50'048.828125);
  EXPECT_NEAR(rp.current_rate_mbps() / 100'000.0, 0.5, 0.001);
  EXPECT_EQ(rp.target_rate_mbps(), 100'000.0);  // target = the rate before the cut
  EXPECT_TRUE(rp.limited());
  EXPECT_DOUBLE_EQ(rp.alpha(), alpha_after_cut(default_initial_alpha, default_gain));
  EXPECT_EQ(rp.cnps_handled(), 1u);
  EXPECT_EQ(rp.rate_cuts(), 1u);
}

TEST(DcqcnReactionPoint, TwoCnpsWithinTheMonitorPeriodCutOnce) {
  DcqcnReactionPoint rp(parameters_at(100'000));  // RATE_REDUCE_MONITOR_PERIOD 4 us
  rp.on_cnp(0);
  const double after_first_cut = rp.current_rate_mbps();
  const double alpha_after_first_cut = rp.alpha();
  rp.on_cnp(us(1));
  EXPECT_EQ(rp.cnps_handled(), 2u);
  EXPECT_EQ(rp.rate_cuts(), 1u);
  rp.advance(us(4) - 1);
  EXPECT_EQ(rp.rate_cuts(), 1u);
  EXPECT_EQ(rp.current_rate_mbps(), after_first_cut);

  // ConnectX keeps the second CNP and cuts once more when the period ends, with the alpha the
  // first cut left. No increase happened in between, so (CLAMP_TGT_RATE off) the target stays
  // at the line rate instead of dropping to the first cut's rate.
  rp.advance(us(4));
  EXPECT_EQ(rp.rate_cuts(), 2u);
  EXPECT_DOUBLE_EQ(rp.current_rate_mbps(), after_first_cut * (1.0 - alpha_after_first_cut / 2.0));
  EXPECT_EQ(rp.target_rate_mbps(), 100'000.0);
}

TEST(DcqcnReactionPoint, ClampTgtRateMakesEveryCutSetTheTarget) {
  DcqcnParameters parameters = parameters_at(100'000);
  parameters.clamp_tgt_rate = true;
  DcqcnReactionPoint rp(parameters);
  rp.on_cnp(0);
  const double after_first_cut = rp.current_rate_mbps();
  rp.on_cnp(us(5));  // past the monitor period: cuts at once
  EXPECT_EQ(rp.rate_cuts(), 2u);
  EXPECT_EQ(rp.target_rate_mbps(), after_first_cut);
}

TEST(DcqcnReactionPoint, ZeroMonitorPeriodLetsEveryCnpCut) {
  DcqcnParameters parameters = parameters_at(100'000);
  parameters.rate_reduce_monitor_period_us = 0;
  DcqcnReactionPoint rp(parameters);
  rp.on_cnp(0);
  rp.on_cnp(1);
  rp.on_cnp(2);
  EXPECT_EQ(rp.rate_cuts(), 3u);
}

TEST(DcqcnReactionPoint, AlphaDecaysOncePerQuietPeriod) {
  for (const std::uint32_t dce_tcp_g : {1019u, 64u}) {
    SCOPED_TRACE(dce_tcp_g);
    DcqcnParameters parameters = parameters_at(100'000);
    parameters.dce_tcp_g = dce_tcp_g;
    DcqcnReactionPoint rp(parameters);
    const double gain = dce_tcp_g / 1024.0;

    rp.on_cnp(0);
    const double alpha_at_cnp = alpha_after_cut(default_initial_alpha, gain);
    rp.advance(us(55) - 1);
    EXPECT_DOUBLE_EQ(rp.alpha(), alpha_at_cnp);  // less than one DCE_TCP_RTT: no decay yet

    // k quiet periods multiply alpha by (1 - g)^k. Checked at the boundaries and in between.
    double expected = alpha_at_cnp;
    for (std::uint64_t period = 1; period <= 4; ++period) {
      expected *= 1.0 - gain;
      rp.advance(us(55) * period);
      EXPECT_NEAR(rp.alpha(), expected, expected * 1e-12) << "period " << period;
      rp.advance(us(55) * period + us(30));
      EXPECT_NEAR(rp.alpha(), expected, expected * 1e-12) << "inside period " << period + 1;
    }
  }
}

TEST(DcqcnReactionPoint, CnpRestartsTheQuietPeriod) {
  DcqcnParameters parameters = parameters_at(100'000);
  parameters.dce_tcp_g = 64;
  DcqcnReactionPoint rp(parameters);
  const double gain = 64.0 / 1024.0;
  rp.on_cnp(0);
  rp.on_cnp(us(50));  // a second cut; the 55 us alpha period now starts at 50 us
  const double alpha_after_second =
      alpha_after_cut(alpha_after_cut(default_initial_alpha, gain), gain);
  rp.advance(us(104));
  EXPECT_DOUBLE_EQ(rp.alpha(), alpha_after_second);
  rp.advance(us(105));
  EXPECT_DOUBLE_EQ(rp.alpha(), alpha_after_second * (1.0 - gain));
}

TEST(DcqcnReactionPoint, FastRecoveryHalvesTheGapForFEvents) {
  DcqcnParameters parameters = parameters_at(40'000);
  parameters.rpg_threshold = 5;         // the paper's F
  parameters.rpg_byte_reset_bytes = 0;  // timer events only
  DcqcnReactionPoint rp(parameters);
  rp.on_cnp(0);
  // 40000 * 1025/2048 = 20019.53125; the gap to the target (40000) is 19980.46875.
  ASSERT_DOUBLE_EQ(rp.current_rate_mbps(), 20'019.53125);
  double gap = 19'980.46875;
  for (std::uint64_t event = 1; event <= 5; ++event) {
    rp.advance(us(300) * event);
    gap /= 2.0;
    EXPECT_DOUBLE_EQ(rp.current_rate_mbps(), 40'000.0 - gap) << "event " << event;
    EXPECT_EQ(rp.target_rate_mbps(), 40'000.0) << "event " << event;
  }
  // Five events: 40000 - 19980.46875/32 = 39375.6103515625.
  EXPECT_DOUBLE_EQ(rp.current_rate_mbps(), 39'375.6103515625);
}

TEST(DcqcnReactionPoint, AdditiveThenHyperIncreaseByTheConfiguredSteps) {
  DcqcnParameters parameters = parameters_at(40'000);
  parameters.rpg_min_dec_fac_percent = 75;  // with alpha ~1 every cut is exactly 25%
  parameters.rpg_byte_reset_bytes = 10'000;
  // F = 1, AI = 5 Mb/s, HAI = 50 Mb/s, RPG_TIME_RESET = 300 us: the defaults.
  DcqcnReactionPoint rp(parameters);

  // Bring the target below the line rate, so that increases are visible:
  rp.on_cnp(0);                     // R_C = 30000, R_T = 40000
  rp.on_bytes_sent(10'000, us(1));  // B = 1 <= F: fast recovery, R_C = 35000
  EXPECT_DOUBLE_EQ(rp.current_rate_mbps(), 35'000.0);
  rp.on_cnp(us(5));  // a byte event happened since the cut, so R_T = 35000; R_C = 26250
  EXPECT_DOUBLE_EQ(rp.target_rate_mbps(), 35'000.0);
  EXPECT_DOUBLE_EQ(rp.current_rate_mbps(), 26'250.0);

  rp.on_bytes_sent(10'000, us(10));  // B = 1, T = 0: fast recovery
  EXPECT_DOUBLE_EQ(rp.target_rate_mbps(), 35'000.0);
  EXPECT_DOUBLE_EQ(rp.current_rate_mbps(), 30'625.0);
  rp.on_bytes_sent(10'000, us(20));  // B = 2 > F, T = 0: additive, R_T + 5
  EXPECT_DOUBLE_EQ(rp.target_rate_mbps(), 35'005.0);
  EXPECT_DOUBLE_EQ(rp.current_rate_mbps(), 32'815.0);
  rp.advance(us(305));  // timer: T = 1, B = 2, min(T, B) = 1 = F: additive again
  EXPECT_DOUBLE_EQ(rp.target_rate_mbps(), 35'010.0);
  EXPECT_DOUBLE_EQ(rp.current_rate_mbps(), 33'912.5);
  rp.advance(us(605));  // T = 2, B = 2: both past F, hyper with i = 1: R_T + 50
  EXPECT_DOUBLE_EQ(rp.target_rate_mbps(), 35'060.0);
  EXPECT_DOUBLE_EQ(rp.current_rate_mbps(), 34'486.25);
  rp.on_bytes_sent(10'000, us(700));  // B = 3, T = 2: i = min - F = 1: R_T + 50
  EXPECT_DOUBLE_EQ(rp.target_rate_mbps(), 35'110.0);
  EXPECT_DOUBLE_EQ(rp.current_rate_mbps(), 34'798.125);
  rp.advance(us(905));  // T = 3, B = 3: i = 2: R_T + 100
  EXPECT_DOUBLE_EQ(rp.target_rate_mbps(), 35'210.0);
  EXPECT_DOUBLE_EQ(rp.current_rate_mbps(), 35'004.0625);
}

TEST(DcqcnReactionPoint, ByteCounterFiresEveryByteReset) {
  DcqcnParameters parameters = parameters_at(40'000);
  parameters.rpg_threshold = 5;       // stay in fast recovery, where each event halves the gap
  DcqcnReactionPoint rp(parameters);  // RPG_BYTE_RESET 32767

  // Bytes sent while unlimited are not counted toward the first limiter's events.
  rp.on_bytes_sent(10 * 32'767, 0);
  rp.on_cnp(us(1));
  ASSERT_DOUBLE_EQ(rp.current_rate_mbps(), 20'019.53125);
  double gap = 19'980.46875;

  rp.on_bytes_sent(32'766, us(2));
  EXPECT_DOUBLE_EQ(rp.current_rate_mbps(), 40'000.0 - gap);  // one byte short
  rp.on_bytes_sent(1, us(3));
  gap /= 2.0;
  EXPECT_DOUBLE_EQ(rp.current_rate_mbps(), 40'000.0 - gap);
  rp.on_bytes_sent(3 * 32'767 + 100, us(4));  // three events in one call, 100 bytes left over
  gap /= 8.0;
  EXPECT_DOUBLE_EQ(rp.current_rate_mbps(), 40'000.0 - gap);
  rp.on_bytes_sent(32'767 - 101, us(5));
  EXPECT_DOUBLE_EQ(rp.current_rate_mbps(), 40'000.0 - gap);
  rp.on_bytes_sent(1, us(6));
  gap /= 2.0;
  EXPECT_DOUBLE_EQ(rp.current_rate_mbps(), 40'000.0 - gap);

  // A cut restarts the byte count: 32766 bytes before it and 1 after are not an event.
  rp.on_bytes_sent(32'766, us(7));
  rp.on_cnp(us(10));
  const double after_second_cut = rp.current_rate_mbps();
  rp.on_bytes_sent(1, us(11));
  EXPECT_EQ(rp.current_rate_mbps(), after_second_cut);
  rp.on_bytes_sent(32'766, us(12));
  EXPECT_DOUBLE_EQ(rp.current_rate_mbps(), (after_second_cut + rp.target_rate_mbps()) / 2.0);
}

TEST(DcqcnReactionPoint, RateStaysBetweenMinRateAndLineRate) {
  DcqcnParameters parameters = parameters_at(10'000);
  parameters.rpg_min_rate_mbps = 1'000;
  DcqcnReactionPoint rp(parameters);
  // A CNP every monitor period: alpha stays near 1, each cut about halves, until the floor.
  std::uint64_t now = 0;
  for (int cnp = 0; cnp < 20; ++cnp, now += us(4)) {
    rp.on_cnp(now);
    EXPECT_GE(rp.current_rate_mbps(), 1'000.0) << "after CNP " << cnp;
  }
  EXPECT_EQ(rp.current_rate_mbps(), 1'000.0);

  // Recover with both counters running; the rate must climb back and never pass the line rate.
  double highest = 0;
  for (int step = 0; step < 20'000 && rp.limited(); ++step, now += us(50)) {
    rp.on_bytes_sent(200'000, now);
    EXPECT_LE(rp.current_rate_mbps(), 10'000.0);
    EXPECT_LE(rp.target_rate_mbps(), 10'000.0);
    EXPECT_GE(rp.current_rate_mbps(), 1'000.0);
    highest = std::max(highest, rp.current_rate_mbps());
  }
  EXPECT_FALSE(rp.limited());
  EXPECT_EQ(rp.current_rate_mbps(), 10'000.0);
  EXPECT_EQ(highest, 10'000.0);
}

TEST(DcqcnReactionPoint, MinDecFacBoundsOneCut) {
  DcqcnParameters parameters = parameters_at(10'000);
  parameters.rpg_min_dec_fac_percent = 90;  // never lose more than 10% in one cut
  DcqcnReactionPoint rp(parameters);
  rp.on_cnp(0);
  EXPECT_DOUBLE_EQ(rp.current_rate_mbps(), 9'000.0);
}

// A scripted replay with the ConnectX defaults (F = 1, RPG_TIME_RESET 300 us, AI 5 Mb/s,
// alpha 1023/1024, RPG_GD 11) on a 40 Gb/s link, timer events only.
//   t = 0       CNP: cut by alpha/2 = 1023/2048: R_C = 40000 * 1025/2048 = 20019.53125, R_T = 40000
//   t = 300 us  T = 1 <= F, fast recovery:   R_C = (20019.53125 + 40000)/2 = 30009.765625
//   t = 600 us  T = 2 > F, additive: R_T = min(40000 + 5, line) = 40000; R_C = 35004.8828125
//   t = 900 us  additive, R_T still capped:  R_C = 37502.44140625
//   t = 1200 us                              R_C = 38751.220703125
//   t = 1500 us                              R_C = 39375.6103515625
//   Each event halves the gap 19980.46875: after k events it is 19980.46875 / 2^k. After 14
//   events (t = 4200 us) the gap is 1.2195110321044921875 Mb/s, so R_C = 39998.7804889678955078125;
//   the 15th (t = 4500 us) leaves 0.61 Mb/s, under ConnectX's 1 Mb/s granularity: released.
TEST(DcqcnReactionPoint, ScriptedCnpThenTimerEvents) {
  DcqcnParameters parameters = parameters_at(40'000);
  parameters.rpg_byte_reset_bytes = 0;
  DcqcnReactionPoint rp(parameters);

  rp.on_cnp(0);
  EXPECT_DOUBLE_EQ(rp.current_rate_mbps(), 20'019.53125);
  EXPECT_DOUBLE_EQ(rp.target_rate_mbps(), 40'000.0);
  rp.advance(us(300) - 1);
  EXPECT_DOUBLE_EQ(rp.current_rate_mbps(), 20'019.53125);
  rp.advance(us(300));
  EXPECT_DOUBLE_EQ(rp.current_rate_mbps(), 30'009.765625);
  rp.advance(us(600));
  EXPECT_DOUBLE_EQ(rp.target_rate_mbps(), 40'000.0);
  EXPECT_DOUBLE_EQ(rp.current_rate_mbps(), 35'004.8828125);
  rp.advance(us(900));
  EXPECT_DOUBLE_EQ(rp.current_rate_mbps(), 37'502.44140625);
  rp.advance(us(1200));
  EXPECT_DOUBLE_EQ(rp.current_rate_mbps(), 38'751.220703125);
  rp.advance(us(1500));
  EXPECT_DOUBLE_EQ(rp.current_rate_mbps(), 39'375.6103515625);
  rp.advance(us(4200));
  EXPECT_TRUE(rp.limited());
  EXPECT_DOUBLE_EQ(rp.current_rate_mbps(), 39'998.7804889678955078125);
  rp.advance(us(4500) - 1);
  EXPECT_TRUE(rp.limited());
  rp.advance(us(4500));
  EXPECT_FALSE(rp.limited());
  EXPECT_EQ(rp.current_rate_mbps(), 40'000.0);
  EXPECT_EQ(rp.rate_cuts(), 1u);

  // The released limiter is gone: the next CNP starts a new one from INITIAL_ALPHA_VALUE.
  EXPECT_EQ(rp.alpha(), default_initial_alpha);
  rp.on_cnp(us(5000));
  EXPECT_DOUBLE_EQ(rp.current_rate_mbps(), 20'019.53125);
}

TEST(DcqcnReactionPoint, OneLateAdvanceEqualsManySmallOnes) {
  DcqcnParameters parameters = parameters_at(40'000);
  parameters.rpg_byte_reset_bytes = 0;
  DcqcnReactionPoint stepped(parameters);
  DcqcnReactionPoint jumped(parameters);
  stepped.on_cnp(0);
  jumped.on_cnp(0);
  for (std::uint64_t now = 0; now <= us(1500); now += us(10)) stepped.advance(now);
  jumped.advance(us(1500));
  EXPECT_EQ(jumped.current_rate_mbps(), stepped.current_rate_mbps());
  EXPECT_EQ(jumped.target_rate_mbps(), stepped.target_rate_mbps());
  EXPECT_DOUBLE_EQ(jumped.alpha(), stepped.alpha());
  EXPECT_DOUBLE_EQ(jumped.current_rate_mbps(), 39'375.6103515625);
}

TEST(DcqcnReactionPoint, TransmitGapFollowsTheRate) {
  DcqcnParameters parameters = parameters_at(8'000);
  parameters.rpg_min_dec_fac_percent = 75;  // alpha ~1: the cut is exactly 25%, to 6000 Mb/s
  DcqcnReactionPoint rp(parameters);
  // 1000 bytes = 8000 bits; at 8000 Mb/s that is 1 us.
  EXPECT_EQ(rp.transmit_gap_ns(1000), 1000u);
  EXPECT_EQ(rp.transmit_gap_ns(0), 0u);
  rp.on_cnp(0);
  ASSERT_DOUBLE_EQ(rp.current_rate_mbps(), 6'000.0);
  // 1500 bytes = 12000 bits at 6000 Mb/s = 2 us; 1000 bytes = 1333.33 ns, rounded.
  EXPECT_EQ(rp.transmit_gap_ns(1500), 2000u);
  EXPECT_EQ(rp.transmit_gap_ns(1000), 1333u);
}

TEST(CnpLimiter, OnePerIntervalCountedFromTheLastCnpSent) {
  CnpLimiter limiter;  // the design's 2 us
  EXPECT_EQ(limiter.min_interval_ns(), 2'000u);
  EXPECT_TRUE(limiter.should_send(us(100)));
  EXPECT_FALSE(limiter.should_send(us(100)));
  EXPECT_FALSE(limiter.should_send(us(100) + 1'999));
  EXPECT_TRUE(limiter.should_send(us(100) + 2'000));
  EXPECT_FALSE(limiter.should_send(us(100) + 3'500));  // 1.5 us after the last CNP sent
  EXPECT_TRUE(limiter.should_send(us(100) + 4'000));
  EXPECT_EQ(limiter.suppressed(), 3u);
}

TEST(CnpLimiter, FirstCeAtTimeZeroIsSent) {
  CnpLimiter limiter(us(50));  // the paper's N
  EXPECT_TRUE(limiter.should_send(0));
  EXPECT_FALSE(limiter.should_send(us(49)));
  EXPECT_TRUE(limiter.should_send(us(50)));
}

TEST(CnpLimiter, ZeroIntervalSendsForEveryMark) {
  CnpLimiter limiter(0);
  EXPECT_TRUE(limiter.should_send(5));
  EXPECT_TRUE(limiter.should_send(5));
  EXPECT_TRUE(limiter.should_send(6));
  EXPECT_EQ(limiter.suppressed(), 0u);
}

TEST(CnpLimiter, ClockSteppingBackSendsNothing) {
  CnpLimiter limiter(1'000);
  EXPECT_TRUE(limiter.should_send(10'000));
  EXPECT_FALSE(limiter.should_send(5'000));
  EXPECT_TRUE(limiter.should_send(11'000));
}

}  // namespace
}  // namespace rocehil::traffic::soft
