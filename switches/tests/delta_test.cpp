#include "rocehil/switches/delta.hpp"

#include <gtest/gtest.h>

#include "rocehil/switches/port_json.hpp"
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

// Queue 1 and 4 of a port, as an agent serves them; queue 8 only when `queue8` is set.
SwitchSnapshot queues(std::uint64_t q1_sent, std::uint64_t q1_dropped, std::uint64_t q4_dropped,
                      bool queue8) {
  std::vector<Varbind> rows = {ticks(100), text(mib::if_name, {4}, "swp1"),
                               c64(mib::queue_stats_value, {4, 2, 1, 1}, q1_sent),
                               c64(mib::queue_stats_value, {4, 2, 1, 5}, q1_dropped),
                               c64(mib::queue_stats_value, {4, 2, 4, 5}, q4_dropped)};
  if (queue8) rows.push_back(c64(mib::queue_stats_value, {4, 2, 8, 5}, 50));
  return build_snapshot("l1", rows);
}

TEST(Delta, EachQueueSubtractsOnItsOwn) {
  const SwitchDelta d = delta(queues(1000, 5, 100, false), queues(1500, 7, 90, true));
  ASSERT_EQ(d.ports.size(), 1u);
  const PortDelta& p = d.ports[0];
  ASSERT_EQ(p.queues.size(), 2u);  // queue 8 appeared during the case: nothing to count from
  EXPECT_EQ(p.queues.at(1).sent_packets, 500u);
  EXPECT_EQ(p.queues.at(1).dropped_packets, 2u);
  EXPECT_FALSE(p.queues.at(4).dropped_packets.has_value());  // went backwards: reset
  EXPECT_FALSE(p.queues.at(4).sent_packets.has_value());     // never served
  ASSERT_FALSE(p.notes.empty());
  EXPECT_NE(p.notes.back().find("egress queue 4 packets dropped went backwards"), std::string::npos)
      << p.notes.back();
  // As run.json's raw.switches has it.
  const nlohmann::json j = to_json(p);
  EXPECT_EQ(j["queues"], nlohmann::json::parse(R"([
      {"queue": 1, "sent_packets": 500, "dropped_packets": 2},
      {"queue": 4, "sent_packets": null, "dropped_packets": null}])"));
  EXPECT_EQ(to_json(queues(1, 2, 3, true).ports[0])["queues"][2],
            nlohmann::json::parse(R"({"queue": 8, "sent_packets": null, "dropped_packets": 50})"));
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
