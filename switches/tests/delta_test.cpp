#include "rocehil/switches/delta.hpp"

#include <gtest/gtest.h>

#include "rows.hpp"

namespace rocehil::switches {
namespace {

using namespace test;

SwitchSnapshot snap(std::uint64_t uptime, std::uint64_t in_octets, std::uint64_t discards,
                    std::uint64_t pfc_rx3, std::int64_t at_ns) {
  SwitchSnapshot s = build_snapshot(
      "l1",
      {ticks(uptime), text(mib::if_name, {4}, "swp1"), c64(mib::if_hc_in_octets, {4}, in_octets),
       c64(mib::if_hc_in_ucast_pkts, {4}, in_octets / 100),
       c64(mib::if_hc_in_multicast_pkts, {4}, 1), c32(mib::if_in_discards, {4}, discards),
       c64(mib::pfc_priority_indications, {4, 3}, pfc_rx3)});
  s.unix_ns = at_ns;
  return s;
}

TEST(Delta, CountersSubtractAndPacketsSumTheirKinds) {
  const SwitchDelta d = delta(snap(100, 1000, 5, 10, 0), snap(400, 201000, 8, 17, 3'000'000'000));
  ASSERT_TRUE(d.answered()) << d.error;
  EXPECT_DOUBLE_EQ(d.seconds, 3.0);
  ASSERT_EQ(d.ports.size(), 1u);
  const PortDelta& p = d.ports[0];
  EXPECT_EQ(p.in_octets, 200000u);
  EXPECT_EQ(p.in_packets, 2000u);  // unicast 2000, multicast 0, broadcast not served
  EXPECT_FALSE(p.out_octets.has_value());
  EXPECT_EQ(p.in_discards, 3u);
  EXPECT_EQ(p.pfc_rx[3], 7u);
  EXPECT_EQ(p.drops(), 3u);
  EXPECT_FALSE(p.errors().has_value());
  EXPECT_TRUE(p.any_activity_of_concern());
  EXPECT_TRUE(d.pfc_served);
}

TEST(Delta, A32BitCounterWrapsOnceA64BitOneThatFallsWasReset) {
  const SwitchDelta d = delta(snap(100, 5000, 0xfffffff0u, 10, 0), snap(200, 10, 0x10, 12, 1));
  const PortDelta& p = d.ports[0];
  EXPECT_EQ(p.in_discards, 0x20u);
  EXPECT_FALSE(p.in_octets.has_value());
  ASSERT_FALSE(p.notes.empty());
  EXPECT_NE(p.notes[0].find("ifHCInOctets went backwards (5000 -> 10)"), std::string::npos)
      << p.notes[0];
}

TEST(Delta, AnAgentThatRestartedGivesNoCounters) {
  const SwitchDelta d = delta(snap(5000, 1, 1, 1, 0), snap(20, 2, 2, 2, 1));
  EXPECT_FALSE(d.answered());
  EXPECT_NE(d.error.find("restarted"), std::string::npos) << d.error;
  EXPECT_TRUE(d.ports.empty());
}

TEST(Delta, ASwitchThatDidNotAnswerSaysWhen) {
  SwitchSnapshot down;
  down.switch_name = "l1";
  down.error = "no answer";
  EXPECT_EQ(delta(down, snap(1, 1, 1, 1, 0)).error, "before the case: no answer");
  EXPECT_EQ(delta(snap(1, 1, 1, 1, 0), down).error, "after the case: no answer");
}

}  // namespace
}  // namespace rocehil::switches
