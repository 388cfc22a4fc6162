#include "rocehil/switches/snapshot.hpp"

#include <gtest/gtest.h>

#include "rows.hpp"

namespace rocehil::switches {
namespace {

using namespace test;

std::vector<Varbind> two_port_rows() {
  return {
      ticks(12345),
      text(mib::sys_name, {0}, "leaf01"),
      text(mib::if_descr, {1}, "lo"),
      text(mib::if_descr, {7}, "Ethernet1/1 descr"),
      text(mib::if_descr, {9}, "Ethernet1/2 descr"),
      c32(mib::if_in_discards, {7}, 5),
      c32(mib::if_out_errors, {9}, 2),
      text(mib::if_name, {1}, "lo"),
      text(mib::if_name, {7}, "Ethernet1/1"),
      text(mib::if_name, {9}, "Ethernet1/2"),
      c64(mib::if_hc_in_octets, {7}, 1000),
      c64(mib::if_hc_out_octets, {7}, 1ULL << 40),
      // A counter served as a string is not read as a number.
      text(mib::if_hc_out_octets, {9}, "123"),
      text(mib::if_alias, {9}, "to spine01"),
      c64(mib::pfc_priority_indications, {7, 3}, 40),
      c64(mib::pfc_priority_requests, {7, 3}, 2),
      // A priority beyond 7 and a row for an ifIndex IF-MIB does not list are ignored.
      c64(mib::pfc_priority_indications, {7, 8}, 99),
      c64(mib::pfc_priority_indications, {55, 3}, 99),
      // Egress queue 1 and 4: unicast and multicast drops sum; ingress rows and sent packets don't.
      c64(mib::queue_stats_value, {9, 2, 1, 5}, 10),
      c64(mib::queue_stats_value, {9, 2, 4, 7}, 3),
      c64(mib::queue_stats_value, {9, 2, 1, 1}, 777),
      c64(mib::queue_stats_value, {9, 1, 1, 5}, 500),
  };
}

TEST(Snapshot, PortsByIfIndexWithEveryServedColumn) {
  const SwitchSnapshot s = build_snapshot("leaf01", two_port_rows());
  EXPECT_TRUE(s.answered());
  EXPECT_EQ(s.sys_name, "leaf01");
  EXPECT_EQ(s.uptime_ticks, 12345u);
  ASSERT_EQ(s.ports.size(), 3u);
  const PortCounters* p7 = s.find_port("Ethernet1/1");
  ASSERT_NE(p7, nullptr);
  EXPECT_EQ(p7->if_index, 7u);
  EXPECT_EQ(p7->in_octets->value, 1000u);
  EXPECT_EQ(p7->in_octets->bits, 64);
  EXPECT_EQ(p7->out_octets->value, 1ULL << 40);
  EXPECT_EQ(p7->in_discards->value, 5u);
  EXPECT_EQ(p7->in_discards->bits, 32);
  EXPECT_FALSE(p7->out_discards.has_value());  // not served: absent, not 0
  EXPECT_EQ(p7->pfc_rx[3]->value, 40u);
  EXPECT_EQ(p7->pfc_tx[3]->value, 2u);
  EXPECT_FALSE(p7->pfc_rx[0].has_value());
  EXPECT_FALSE(p7->queue_drops.has_value());
  const PortCounters* p9 = s.find_port("Ethernet1/2");
  ASSERT_NE(p9, nullptr);
  EXPECT_FALSE(p9->out_octets.has_value());
  EXPECT_EQ(p9->queue_drops->value, 13u);
  EXPECT_TRUE(s.pfc_served);
  EXPECT_TRUE(s.queues_served);
}

TEST(Snapshot, EachEgressQueueIsKeptByItsNumber) {
  const SwitchSnapshot s = build_snapshot("leaf01", two_port_rows());
  EXPECT_TRUE(s.find_port("Ethernet1/1")->queues.empty());
  const auto& queues = s.find_port("Ethernet1/2")->queues;
  ASSERT_EQ(queues.size(), 2u);  // the ingress row (direction 1) is no queue of these
  EXPECT_EQ(queues.at(1).dropped_packets->value, 10u);
  EXPECT_EQ(queues.at(1).sent_packets->value, 777u);
  EXPECT_EQ(queues.at(4).dropped_packets->value, 3u);
  EXPECT_FALSE(queues.at(4).sent_packets.has_value());  // not served: absent, not 0
}

// A lossless switch (SONiC's, the testbed's with --lossless): 8 queues, bytes too.
TEST(Snapshot, ALosslessSwitchsEightQueuesEachWithItsCounts) {
  std::vector<Varbind> rows = {text(mib::if_name, {5}, "Ethernet0")};
  for (std::uint32_t queue = 1; queue <= 8; ++queue) {
    rows.push_back(c64(mib::queue_stats_value, {5, 2, queue, 1}, 100 * queue));
    rows.push_back(c64(mib::queue_stats_value, {5, 2, queue, 2}, 999'999));  // bytes sent
    rows.push_back(c64(mib::queue_stats_value, {5, 2, queue, 5}, queue));
    rows.push_back(c64(mib::queue_stats_value, {5, 2, queue, 6}, 888'888));  // bytes dropped
  }
  rows.push_back(c32(mib::queue_stats_value, {5, 2, 4, 3}, 7));  // multicast sent, 32 bits
  const SwitchSnapshot s = build_snapshot("l1", rows);
  ASSERT_EQ(s.ports.size(), 1u);
  const PortCounters& p = s.ports[0];
  ASSERT_EQ(p.queues.size(), 8u);
  for (std::uint32_t queue = 1; queue <= 8; ++queue) {
    EXPECT_EQ(p.queues.at(queue).dropped_packets->value, queue);
    EXPECT_EQ(p.queues.at(queue).sent_packets->value, 100 * queue + (queue == 4 ? 7 : 0));
  }
  EXPECT_EQ(p.queues.at(4).sent_packets->bits, 32);  // wraps as its narrowest part
  EXPECT_EQ(p.queue_drops->value, 36u);              // 1 + ... + 8
  EXPECT_TRUE(s.queues_served);
}

TEST(Snapshot, PortsAreFoundByNameThenDescriptionThenAlias) {
  const SwitchSnapshot s = build_snapshot("leaf01", two_port_rows());
  EXPECT_EQ(s.find_port("Ethernet1/2 descr")->if_index, 9u);
  EXPECT_EQ(s.find_port("to spine01")->if_index, 9u);
  EXPECT_EQ(s.find_port("Ethernet1/3"), nullptr);
}

TEST(Snapshot, AnAgentWithoutVendorMibsServesNoPfcOrQueues) {
  const SwitchSnapshot s =
      build_snapshot("s1", {text(mib::if_name, {2}, "swp1"), c64(mib::if_hc_in_octets, {2}, 1)});
  EXPECT_FALSE(s.pfc_served);
  EXPECT_FALSE(s.queues_served);
  EXPECT_FALSE(s.uptime_ticks.has_value());
}

}  // namespace
}  // namespace rocehil::switches
