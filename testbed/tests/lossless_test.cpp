// The lossless switch model: SONiC's classes, WRED with ECN, strict priority and DWRR, PFC's
// ingress accounting and the pause a received frame sets. Pure, on numbers worked out here.
#include <gtest/gtest.h>

#include <random>

#include "lossless/admission.hpp"
#include "lossless/egress_scheduler.hpp"
#include "lossless/ingress_buffers.hpp"
#include "lossless/qos_profile.hpp"

namespace rocehil::testbed::lossless {
namespace {

TEST(LosslessProfile, SonicsDscpMapAndTheRoceClasses) {
  const DscpToTc map = sonic_dscp_to_tc();
  EXPECT_EQ(map[3], 3);
  EXPECT_EQ(map[4], 4);
  EXPECT_EQ(map[5], 2);
  EXPECT_EQ(map[8], 0);
  EXPECT_EQ(map[46], 5);
  EXPECT_EQ(map[48], 6);  // CNPs
  EXPECT_EQ(map[26], 1);  // rocehil's default class 106 (DSCP 26) is lossy on SONiC's map
  EXPECT_EQ(map[0], 1);
  EXPECT_EQ(map[63], 1);

  const PortProfile p = sonic_roce_profile(1000);  // 125,000 bytes per millisecond
  for (int q = 0; q < classes; ++q) {
    EXPECT_EQ(p.queues[q].lossless, q == 3 || q == 4) << q;
    EXPECT_EQ(p.queues[q].strict, q == 6) << q;
    EXPECT_EQ(p.queues[q].weight, q == 3 || q == 4 ? 15u : 14u) << q;
    EXPECT_EQ(p.queues[q].limit_bytes, 625'000u) << q;
  }
  EXPECT_EQ(p.queues[3].wred.kmin_bytes, 125'000u);
  EXPECT_EQ(p.queues[3].wred.kmax_bytes, 500'000u);
  EXPECT_DOUBLE_EQ(p.queues[3].wred.pmax, 0.10);
  EXPECT_FALSE(p.queues[1].wred.ecn && p.queues[1].wred.kmax_bytes > 0);
  EXPECT_EQ(p.xoff_bytes, 250'000u);
  EXPECT_EQ(p.xon_bytes, 125'000u);
  EXPECT_EQ(p.headroom_bytes, 125'000u);
  // A slow port still holds a jumbo frame in each threshold.
  EXPECT_EQ(sonic_roce_profile(10).headroom_bytes, 9216u);
}

TEST(LosslessWred, TheProbabilityRisesFromKminToPmaxThenEveryPacket) {
  const Wred w{true, 100'000, 300'000, 0.2};
  EXPECT_EQ(wred_probability(w, 99'999), 0);
  EXPECT_EQ(wred_probability(w, 100'000), 0);
  EXPECT_DOUBLE_EQ(wred_probability(w, 200'000), 0.1);
  EXPECT_DOUBLE_EQ(wred_probability(w, 250'000), 0.15);
  EXPECT_EQ(wred_probability(w, 300'000), 1);
  EXPECT_EQ(wred_probability({false, 100'000, 300'000, 0.2}, 1'000'000), 0);
}

// A steady queue between Kmin and Kmax: the marked share of ECN-capable packets follows WRED's
// probability. 100,000 draws of a seeded generator: the binomial standard deviation at p = 0.1 is
// 0.00095, so 0.005 is over five of them.
TEST(LosslessWred, AtASteadyDepthTheMarkedShareIsTheProbability) {
  QueueProfile q;
  q.lossless = true;
  q.wred = {true, 100'000, 300'000, 0.2};
  std::mt19937_64 random(7);
  std::uniform_real_distribution<double> uniform(0, 1);
  for (const std::uint32_t depth : {150'000u, 200'000u, 290'000u}) {
    int marked = 0;
    const int draws = 100'000;
    for (int i = 0; i < draws; ++i)
      if (admit(q, depth, 1024, true, uniform(random)) == Admission::enqueue_marked) ++marked;
    EXPECT_NEAR(static_cast<double>(marked) / draws, wred_probability(q.wred, depth), 0.005)
        << depth;
  }
}

TEST(LosslessWred, ALossyQueueTailDropsAndRedDropsTheNotEcnCapableALosslessOneNever) {
  QueueProfile lossy;
  lossy.limit_bytes = 10'000;
  lossy.wred = {true, 1'000, 2'000, 0.5};
  EXPECT_EQ(admit(lossy, 9'000, 1'000, true, 0.99), Admission::enqueue_marked);  // over kmax
  EXPECT_EQ(admit(lossy, 9'001, 1'000, true, 0.0), Admission::drop);             // past the limit
  EXPECT_EQ(admit(lossy, 1'500, 100, false, 0.1), Admission::drop);  // RED drop, not ECN-capable
  EXPECT_EQ(admit(lossy, 1'500, 100, false, 0.9), Admission::enqueue);
  QueueProfile lossless = lossy;
  lossless.lossless = true;
  EXPECT_EQ(admit(lossless, 50'000, 1'000, false, 0.0), Admission::enqueue);
  EXPECT_EQ(admit(lossless, 50'000, 1'000, true, 0.0), Admission::enqueue_marked);
}

// Packets sent by `picks` turns of the scheduler over always-backlogged queues of `sizes`.
std::array<std::uint64_t, classes> serve(EgressScheduler& s,
                                         const std::array<std::uint32_t, classes>& sizes,
                                         std::uint8_t paused, int picks) {
  std::array<std::uint64_t, classes> bytes{};
  for (int i = 0; i < picks; ++i) {
    const int q = s.pick(sizes, paused);
    if (q < 0) break;
    bytes[q] += sizes[q];
    s.sent(q, sizes[q]);
  }
  return bytes;
}

TEST(LosslessScheduler, StrictFirstThenBytesByWeightWhateverThePacketSizes) {
  const PortProfile p = sonic_roce_profile(1000);
  EgressScheduler s(p);
  // The CNP queue, backlogged, takes every turn.
  std::array<std::uint32_t, classes> sizes{1024, 1024, 0, 4096, 1024, 0, 64, 0};
  auto bytes = serve(s, sizes, 0, 1000);
  EXPECT_EQ(bytes[6], 64'000u);
  // Without it: queues 0, 1 (weight 14) and 3, 4 (15) share in bytes, not packets, by weight.
  sizes[6] = 0;
  bytes = serve(s, sizes, 0, 200'000);
  const double total = static_cast<double>(bytes[0] + bytes[1] + bytes[3] + bytes[4]);
  for (const int q : {0, 1})
    EXPECT_NEAR(static_cast<double>(bytes[q]) / total, 14.0 / 58, 0.005) << q;
  for (const int q : {3, 4})
    EXPECT_NEAR(static_cast<double>(bytes[q]) / total, 15.0 / 58, 0.005) << q;
}

TEST(LosslessScheduler, APausedQueueIsPassedOverAndNothingIsMinusOne) {
  EgressScheduler s(sonic_roce_profile(1000));
  std::array<std::uint32_t, classes> sizes{};
  EXPECT_EQ(s.pick(sizes, 0), -1);
  sizes[3] = 1500;
  EXPECT_EQ(s.pick(sizes, 1u << 3), -1);  // PFC on priority 3: it waits
  sizes[1] = 1500;
  for (int i = 0; i < 50; ++i) {
    const int q = s.pick(sizes, 1u << 3);
    ASSERT_EQ(q, 1);
    s.sent(q, 1500);
  }
  // Resumed, it has its turn once queue 1 has spent its visit's credit (14 quanta: 86 packets).
  bool served = false;
  const int visit = 14 * static_cast<int>(EgressScheduler::quantum_bytes) / 1500 + 1;
  for (int i = 0; i < visit && !served; ++i) {
    const int q = s.pick(sizes, 0);
    served = q == 3;
    s.sent(q, 1500);
  }
  EXPECT_TRUE(served);
}

TEST(LosslessIngress, XoffOnceOverItXonOnceUnderItAndPastTheHeadroomADefect) {
  PortProfile p;
  p.xoff_bytes = 10'000;
  p.xon_bytes = 4'000;
  p.headroom_bytes = 3'000;
  IngressBuffers b(2, p);
  EXPECT_EQ(b.arrive(1, 3, 6'000), IngressBuffers::Arrival::admitted);
  EXPECT_EQ(b.arrive(1, 3, 5'000), IngressBuffers::Arrival::admitted_xoff);  // 11,000 > XOFF
  EXPECT_TRUE(b.xoff(1, 3));
  EXPECT_EQ(b.arrive(1, 3, 1'000), IngressBuffers::Arrival::admitted);  // still over: no new XOFF
  EXPECT_EQ(b.arrive(1, 3, 1'001), IngressBuffers::Arrival::dropped);   // 13,001 > 10,000 + 3,000
  EXPECT_EQ(b.counters(1, 3).lossless_drops, 1u);
  EXPECT_EQ(b.counters(1, 3).lossless_dropped_bytes, 1'001u);
  EXPECT_EQ(b.held_bytes(1, 3), 12'000u);
  // Another port and priority are their own.
  EXPECT_EQ(b.arrive(0, 3, 9'000), IngressBuffers::Arrival::admitted);
  EXPECT_EQ(b.arrive(1, 4, 9'000), IngressBuffers::Arrival::admitted);
  EXPECT_FALSE(b.depart(1, 3, 7'000));  // 5,000: over XON
  EXPECT_TRUE(b.depart(1, 3, 1'000));   // 4,000: XON
  EXPECT_FALSE(b.xoff(1, 3));
  EXPECT_FALSE(b.depart(1, 3, 1'000));
  EXPECT_EQ(b.counters(1, 3).xoff_sent, 1u);
  EXPECT_EQ(b.counters(1, 3).xon_sent, 1u);
  EXPECT_EQ(b.counters(1, 3).peak_bytes, 12'000u);
}

TEST(LosslessPause, AQuantaIs512BitTimesAndZeroResumes) {
  // 65535 quanta at 1 Gbit/s: 65535 x 512 ns = 33.55 ms.
  EXPECT_EQ(PauseState::quanta_ns(65535, 1e9), 33'553'920u);
  EXPECT_EQ(PauseState::quanta_ns(1, 100e9), 5u);  // 5.12 ns at 100 Gbit/s
  PauseState port(1e9);
  std::array<std::uint16_t, classes> quanta{};
  quanta[3] = 1000;  // 512 us
  quanta[4] = 2000;  // 1024 us, but 4 is not enabled
  port.received(1u << 3, quanta, 1'000'000);
  EXPECT_EQ(port.paused(1'000'000), 1u << 3);
  EXPECT_EQ(port.paused(1'511'999), 1u << 3);
  EXPECT_EQ(port.paused(1'512'000), 0u);
  EXPECT_EQ(port.next_end_ns(1'000'000), 1'512'000u);
  port.received(1u << 3, quanta, 1'100'000);  // refreshed
  EXPECT_EQ(port.next_end_ns(1'100'000), 1'612'000u);
  quanta[3] = 0;
  port.received(1u << 3, quanta, 1'200'000);  // XON
  EXPECT_EQ(port.paused(1'200'000), 0u);
  EXPECT_EQ(port.next_end_ns(1'200'000), 0u);
}

}  // namespace
}  // namespace rocehil::testbed::lossless
