// The soft NIC's port pacer on a clock the test moves: what a sender that always sends when the
// port lets it gets through in a given time.
#include "soft/port_pacer.hpp"

#include <gtest/gtest.h>

namespace rocehil::traffic::soft {
namespace {

// Sends `payload`-byte datagrams whenever the port is ready, stepping the clock by 100 ns from
// `start` until `end`; returns the bytes on the wire (payload + overhead).
std::uint64_t saturate(PortPacer& port, std::uint32_t payload, std::uint32_t overhead,
                       std::uint64_t start, std::uint64_t end) {
  std::uint64_t wire = 0;
  for (std::uint64_t now = start; now < end; now += 100)
    while (port.ready(now)) {
      port.on_sent(payload, now);
      wire += payload + overhead;
    }
  return wire;
}

TEST(PortPacer, AnUnknownSpeedNeverHoldsAPacket) {
  PortPacer port;
  EXPECT_FALSE(port.paced());
  for (int i = 0; i < 1000; ++i) {
    ASSERT_TRUE(port.ready(5));
    port.on_sent(4096, 5);
  }
}

TEST(PortPacer, ASaturatingSenderGetsThePortSpeedAndNoMore) {
  // 1 Gb/s is one byte per 8 ns: 125,000,000 bytes in a second.
  for (const std::uint32_t payload : {64u, 1100u, 4140u}) {
    PortPacer port(1.0, 42);
    const std::uint64_t second = 1'000'000'000;
    const std::uint64_t wire = saturate(port, payload, 42, second, 2 * second);
    // At most the second's worth plus the credit an idle port lends (67.2 us = 8,400 bytes) and
    // one packet; at least the second's worth less a packet.
    EXPECT_LE(wire, 125'000'000u + 8'400u + payload + 42) << payload;
    EXPECT_GE(wire, 125'000'000u - payload - 42) << payload;
  }
}

TEST(PortPacer, AnIdlePortLendsABurstNotAWindow) {
  PortPacer port(1.0, 42);
  (void)saturate(port, 4096, 42, 0, 1'000'000);
  // Idle for a second, then everything the port takes at one instant: the 67.2 us of credit
  // (two 4 KiB packets) and the packet that starts the new period, not a second's worth.
  std::uint64_t burst = 0;
  const std::uint64_t later = 1'001'000'000;
  while (port.ready(later)) {
    port.on_sent(4096, later);
    ++burst;
  }
  EXPECT_EQ(burst, 3u);
}

TEST(PortPacer, OverheadCountsAgainstThePort) {
  // The same payload with IPv6's headers (62 bytes) leaves fewer packets per second than IPv4's.
  PortPacer v4(1.0, 42), v6(1.0, 62);
  std::uint64_t n4 = 0, n6 = 0;
  for (std::uint64_t now = 0; now < 10'000'000; now += 100) {
    while (v4.ready(now)) v4.on_sent(100, now), ++n4;
    while (v6.ready(now)) v6.on_sent(100, now), ++n6;
  }
  EXPECT_GT(n4, n6);
  EXPECT_NEAR(static_cast<double>(n4) / static_cast<double>(n6), 162.0 / 142.0, 0.01);
}

}  // namespace
}  // namespace rocehil::traffic::soft
