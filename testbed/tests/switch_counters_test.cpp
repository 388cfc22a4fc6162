#include "rocehil/testbed/switch_counters.hpp"

#include <gtest/gtest.h>

#include "has_line.hpp"

#include "rocehil/common/error.hpp"

namespace rocehil::testbed {
namespace {

Topology fabric() {
  TestbedOptions o;
  o.dir = "/tmp/tb";
  o.id = "t1";
  return build_topology(o, 8);
}

using testing::has_line;

TEST(SwitchCounters, CounterNamesAreIdentifiersNamingPortDirectionAndPriority) {
  EXPECT_EQ(pfc_counter_name("t1-h1", PfcDirection::received, 3), "rx_t1_h1_p3");
  EXPECT_EQ(pfc_counter_name("abc123-s32", PfcDirection::sent, 0), "tx_abc123_s32_p0");
  EXPECT_EQ(pfc_table_name("t1"), "rocehil_t1_pfc");
}

TEST(SwitchCounters, RulesetCountsEveryPriorityLeavingFabricPortsOnly) {
  const Topology t = fabric();
  const std::string leaf = pfc_nft_ruleset(*t.find("l1"), t);
  EXPECT_TRUE(has_line(leaf, "table netdev rocehil_t1_pfc {")) << leaf;
  EXPECT_TRUE(has_line(leaf, "  counter tx_t1_h1_p0 {"));
  EXPECT_TRUE(has_line(leaf, "  counter tx_t1_s2_p7 {"));
  EXPECT_TRUE(
      has_line(leaf, "    type filter hook egress device \"t1-s1\" priority -500; policy accept;"));
  // No ingress hook: with one, the kernel counts every frame a packet socket (lldpd's) took as
  // a receive drop. What a port receives is read from its peer's egress counters.
  EXPECT_EQ(leaf.find("ingress"), std::string::npos);
  EXPECT_EQ(leaf.find("counter rx_"), std::string::npos);
  // Priority 3's class-enable bit is bit 140 of the frame; priority 0's, bit 143.
  EXPECT_TRUE(has_line(
      leaf, "    ether type 0x8808 @ll,112,16 0x0101 @ll,140,1 1 counter name \"tx_t1_h1_p3\""));
  EXPECT_TRUE(has_line(
      leaf, "    ether type 0x8808 @ll,112,16 0x0101 @ll,143,1 1 counter name \"tx_t1_s2_p0\""));
  // Two hosts and two spines, eight priorities.
  std::size_t counters = 0;
  for (auto at = leaf.find("  counter "); at != std::string::npos;
       at = leaf.find("  counter ", at + 1))
    ++counters;
  EXPECT_EQ(counters, 4u * 8);
  EXPECT_EQ(leaf.find("t1-mgmt"), std::string::npos);
  const std::string spine = pfc_nft_ruleset(*t.find("s1"), t);
  EXPECT_NE(spine.find("device \"t1-l2\""), std::string::npos);
  EXPECT_EQ(spine.find("t1-cap"), std::string::npos);
  EXPECT_EQ(spine.find("t1-mgmt"), std::string::npos);
  // A host counts what its NIC sends: what its leaf's port receives.
  const std::string host = pfc_nft_ruleset(*t.find("h1"), t);
  EXPECT_TRUE(has_line(host, "  counter tx_t1_nic0_p3 {"));
  EXPECT_EQ(host.find("t1-mgmt"), std::string::npos);
  EXPECT_EQ(pfc_nft_ruleset(*t.find("cap"), t), "");
}

// As `nft -j list counters table netdev rocehil_t1_pfc` printed them (nft 1.0.6), with a counter
// of another table and family that must not be taken.
constexpr const char* nft_sample = R"({"nftables": [
  {"metainfo": {"version": "1.0.6", "release_name": "Lester Gooch #5", "json_schema_version": 1}},
  {"counter": {"family": "netdev", "name": "rx_t1_h1_p3", "table": "rocehil_t1_pfc",
               "handle": 3, "packets": 7, "bytes": 420}},
  {"counter": {"family": "netdev", "name": "tx_t1_h1_p3", "table": "rocehil_t1_pfc",
               "handle": 4, "packets": 5, "bytes": 300}},
  {"counter": {"family": "netdev", "name": "rx_t1_h1_p4", "table": "rocehil_t1_pfc",
               "handle": 5, "packets": 2, "bytes": 120}},
  {"counter": {"family": "ip", "name": "rx_t1_h1_p0", "table": "rocehil_t1_pfc",
               "handle": 9, "packets": 99, "bytes": 1}}]})";

// `tc -s -j qdisc show` in a leaf: a tbf on t1-h1, none on the management port.
constexpr const char* tc_sample = R"([
  {"kind":"noqueue","handle":"0:","dev":"lo","root":true,"refcnt":2,"options":{},"bytes":0,
   "packets":0,"drops":0,"overlimits":0,"requeues":0,"backlog":0,"qlen":0},
  {"kind":"tbf","handle":"8001:","dev":"t1-h1","root":true,"refcnt":3,
   "options":{"rate":125000000,"burst":125000,"lat":5000},"bytes":123456,"packets":789,
   "drops":12,"overlimits":40,"requeues":0,"backlog":0,"qlen":0},
  {"kind":"clsact","handle":"ffff:","dev":"t1-l1","parent":"ffff:fff1","bytes":0,"packets":0,
   "drops":0,"overlimits":0,"requeues":0,"backlog":0,"qlen":0},
  {"kind":"noqueue","handle":"0:","dev":"t1-mgmt","root":true,"refcnt":2,"options":{},
   "bytes":0,"packets":0,"drops":0,"overlimits":0,"requeues":0,"backlog":0,"qlen":0}])";

constexpr const char* ip_sample = R"([
  {"ifindex":1,"ifname":"lo","flags":["LOOPBACK","UP"],"mtu":65536},
  {"ifindex":2,"link_index":9,"ifname":"t1-h1","flags":["UP"],"mtu":9000},
  {"ifindex":7,"link_index":12,"ifname":"t1-s1","flags":["UP"],"mtu":9000},
  {"ifindex":3,"link_index":4,"ifname":"t1-mgmt","flags":["UP"],"mtu":1500}])";

TEST(SwitchCounters, NftCountersOfTheTableAreReadByName) {
  const auto counters = parse_nft_counters(nlohmann::json::parse(nft_sample), "rocehil_t1_pfc");
  EXPECT_EQ(counters.size(), 3u);
  EXPECT_EQ(counters.at("rx_t1_h1_p3"), 7u);
  EXPECT_EQ(counters.at("tx_t1_h1_p3"), 5u);
  EXPECT_TRUE(parse_nft_counters(nlohmann::json::parse(nft_sample), "other").empty());
  EXPECT_TRUE(parse_nft_counters(nlohmann::json::array(), "rocehil_t1_pfc").empty());
}

TEST(SwitchCounters, TbfStatisticsByDevice) {
  const auto queues = parse_tbf_stats(nlohmann::json::parse(tc_sample));
  ASSERT_EQ(queues.size(), 1u);
  EXPECT_EQ(queues.at("t1-h1").packets, 789u);
  EXPECT_EQ(queues.at("t1-h1").bytes, 123456u);
  EXPECT_EQ(queues.at("t1-h1").drops, 12u);
}

TEST(SwitchCounters, PortsAreTheInterfacesWithCountersInIfindexOrder) {
  const auto ifindexes = parse_ifindexes(nlohmann::json::parse(ip_sample));
  EXPECT_EQ(ifindexes.at("t1-s1"), 7);
  auto counters = parse_nft_counters(nlohmann::json::parse(nft_sample), "rocehil_t1_pfc");
  counters["tx_t1_s1_p0"] = 0;  // a port whose counters are all still zero is a port
  // h1's NIC (t1-nic0 in rocehil-t1-h1) sent 7 frames of priority 3 and 2 of priority 4.
  const std::map<std::string, VethPeer> peers = {{"t1-h1", {"rocehil-t1-h1", "t1-nic0"}}};
  const std::map<std::string, std::map<std::string, std::uint64_t>> peer_counters = {
      {"rocehil-t1-h1", {{"tx_t1_nic0_p3", 7}, {"tx_t1_nic0_p4", 2}}}};
  const auto ports = assemble_ports(
      ifindexes, counters, parse_tbf_stats(nlohmann::json::parse(tc_sample)), peers, peer_counters);
  ASSERT_EQ(ports.size(), 2u);  // not lo, not the management port
  EXPECT_EQ(ports[0].name, "t1-h1");
  EXPECT_EQ(ports[0].ifindex, 2);
  EXPECT_EQ(ports[0].pfc_received[3], 7u);
  EXPECT_EQ(ports[0].pfc_received[4], 2u);
  EXPECT_EQ(ports[1].pfc_received[3], 0u);  // no peer known: nothing received
  EXPECT_EQ(ports[0].pfc_sent[3], 5u);
  EXPECT_EQ(ports[0].pfc_sent[0], 0u);
  ASSERT_EQ(ports[0].queues.size(), 1u);  // the tbf's one queue
  EXPECT_EQ(ports[0].queues[0].drops, 12u);
  EXPECT_FALSE(ports[0].queues[0].drop_bytes.has_value());  // a tbf does not count them
  EXPECT_EQ(ports[1].name, "t1-s1");
  EXPECT_TRUE(ports[1].queues.empty());  // unshaped: no queue rows
}

TEST(SwitchCounters, ALosslessSwitchsPortsHaveItsEightQueues) {
  std::vector<dataplane::PortSnapshot> snapshots(3);
  snapshots[0].ifname = "t1-s1";
  snapshots[0].ifindex = 7;
  snapshots[1].ifname = "t1-h1";  // the process did not record it: the kernel's, by name
  snapshots[2].ifname = "gone";   // nor does the kernel know it: no row to serve it in
  for (std::size_t tc = 0; tc < 8; ++tc) {
    snapshots[1].queue[tc] = {10 + tc, 20 + tc, 30 + tc, 40 + tc, 50, 60, 70};
    snapshots[0].queue[tc].packets = 100 + tc;
  }
  const auto ports = lossless_ports(snapshots, {{"t1-h1", 2}, {"t1-s1", 99}});
  ASSERT_EQ(ports.size(), 2u);
  EXPECT_EQ(ports[0].name, "t1-h1");  // in ifindex order
  EXPECT_EQ(ports[0].ifindex, 2);
  EXPECT_EQ(ports[1].name, "t1-s1");
  EXPECT_EQ(ports[1].ifindex, 7);  // the snapshot's own comes first
  ASSERT_EQ(ports[0].queues.size(), 8u);
  ASSERT_EQ(ports[1].queues.size(), 8u);
  for (std::size_t tc = 0; tc < 8; ++tc) {
    const QueueCounters& q = ports[0].queues[tc];
    EXPECT_EQ(q.packets, 10 + tc);
    EXPECT_EQ(q.bytes, 20 + tc);
    EXPECT_EQ(q.drops, 30 + tc);
    EXPECT_EQ(q.drop_bytes, std::optional<std::uint64_t>(40 + tc));
    EXPECT_EQ(ports[1].queues[tc].packets, 100 + tc);
  }
  EXPECT_EQ(ports[0].pfc_sent, (std::array<std::uint64_t, 8>{}));  // PFC stays nftables'
}

TEST(SwitchCounters, VethPeersFromIpLinkAndNetnsIds) {
  // As `ip -j link show` and `ip -j netns list-id` print them (iproute2 6.1).
  const auto peers = parse_peer_indexes(nlohmann::json::parse(
      R"([{"ifindex":1,"ifname":"lo"},
          {"ifindex":2,"link_index":2,"ifname":"t1-h1","link_netnsid":0},
          {"ifindex":7,"link_index":12,"ifname":"t1-s1","link_netnsid":3}])"));
  ASSERT_EQ(peers.size(), 2u);
  EXPECT_EQ(peers.at("t1-s1").nsid, 3);
  EXPECT_EQ(peers.at("t1-s1").ifindex, 12);
  const auto names = parse_netns_ids(nlohmann::json::parse(
      R"([{"nsid":0,"name":"rocehil-t1-h1"},{"nsid":3,"name":"rocehil-t1-s1"}])"));
  EXPECT_EQ(names.at(3), "rocehil-t1-s1");
}

TEST(SwitchCounters, TheTestbedIdComesFromTheNamespaceName) {
  EXPECT_EQ(id_of_netns("rocehil-t1-l1"), "t1");
  EXPECT_EQ(id_of_netns("rocehil-abc123-s32"), "abc123");
  for (const char* bad : {"l1", "rocehil-", "rocehil--l1", "other-t1-l1", "rocehil-t1"})
    EXPECT_THROW(id_of_netns(bad), Error) << bad;
}

}  // namespace
}  // namespace rocehil::testbed
