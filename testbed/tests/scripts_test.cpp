#include "rocehil/testbed/scripts.hpp"

#include <gtest/gtest.h>

#include "has_line.hpp"

namespace rocehil::testbed {
namespace {

struct ScriptFabric {
  TestbedOptions o;
  Topology t;
  ScriptFabric() {
    o.dir = "/tmp/tb";
    o.id = "t1";
    t = build_topology(o, 8);
  }
};

using testing::has_line;

TEST(Scripts, EveryNamespaceIsAdded) {
  ScriptFabric f;
  const std::string batch = netns_add_batch(f.t);
  EXPECT_TRUE(has_line(batch, "netns add rocehil-t1-h1"));
  EXPECT_TRUE(has_line(batch, "netns add rocehil-t1-cap"));
  EXPECT_EQ(std::count(batch.begin(), batch.end(), '\n'), 9);
}

TEST(Scripts, VethEndsAreCreatedInTheirNamespaces) {
  ScriptFabric f;
  const std::string batch = links_batch(f.t);
  EXPECT_TRUE(has_line(batch, "link add name t1-br type bridge"));
  EXPECT_TRUE(has_line(batch, "addr add 198.19.8.1/23 dev t1-br"));
  EXPECT_TRUE(has_line(batch,
                       "link add name t1-nic0 netns rocehil-t1-h1 type veth peer name t1-h1 netns "
                       "rocehil-t1-l1"));
  EXPECT_TRUE(
      has_line(batch, "link add name t1-h2 type veth peer name t1-mgmt netns rocehil-t1-h2"));
  EXPECT_TRUE(has_line(batch, "link set dev t1-h2 master t1-br up"));
  // Switches have a management port on the bridge too (SNMP).
  EXPECT_TRUE(
      has_line(batch, "link add name t1-s1 type veth peer name t1-mgmt netns rocehil-t1-s1"));
  EXPECT_TRUE(has_line(batch, "link set dev t1-l2 master t1-br up"));
  EXPECT_TRUE(has_line(batch,
                       "link add name t1-cap netns rocehil-t1-s2 type veth peer name t1-m2 netns "
                       "rocehil-t1-cap"));
}

TEST(Scripts, RoutersForwardWithTheL4HashAndHostsHaveNoIpv6) {
  ScriptFabric f;
  const auto leaf = sysctls(*f.t.find("l1"), f.o);
  EXPECT_NE(std::find(leaf.begin(), leaf.end(), "net.ipv4.fib_multipath_hash_policy=1"),
            leaf.end());
  EXPECT_NE(std::find(leaf.begin(), leaf.end(), "net.ipv4.ip_forward=1"), leaf.end());
  EXPECT_NE(std::find(leaf.begin(), leaf.end(), "net.ipv4.fib_multipath_hash_seed=1"), leaf.end());
  const auto host = sysctls(*f.t.find("h1"), f.o);
  EXPECT_NE(std::find(host.begin(), host.end(), "net.ipv6.conf.default.disable_ipv6=1"),
            host.end());
  EXPECT_EQ(std::find(host.begin(), host.end(), "net.ipv4.ip_forward=1"), host.end());
}

TEST(Scripts, LeafBatchHasPointToPointAddressesAndAnEcmpRoute) {
  ScriptFabric f;
  const std::string batch = namespace_ip_batch(*f.t.find("l1"), f.o);
  EXPECT_TRUE(has_line(batch, "addr add 198.18.1.1 peer 198.18.1.11 dev t1-h1"));
  EXPECT_TRUE(has_line(batch, "link set dev t1-s2 mtu 9000"));
  EXPECT_TRUE(has_line(batch,
                       "route add 198.18.2.0/24 nexthop via 198.18.101.3 dev t1-s1 weight 1 "
                       "nexthop via 198.18.102.3 dev t1-s2 weight 1"));
  const std::string host = namespace_ip_batch(*f.t.find("h1"), f.o);
  EXPECT_TRUE(has_line(host, "addr add 198.19.8.11/23 dev t1-mgmt"));
  EXPECT_TRUE(has_line(host, "route add 198.18.0.0/16 via 198.18.1.1 dev t1-nic0"));
  EXPECT_EQ(host.find("mtu 9000 dev t1-mgmt"), std::string::npos);
  EXPECT_TRUE(has_line(batch, "addr add 198.19.9.101/23 dev t1-mgmt"));
  EXPECT_EQ(batch.find("dev t1-mgmt mtu"), std::string::npos);
  // Management is on-link; the fabric routes are all the leaf has.
  EXPECT_EQ(batch.find("route add 198.19"), std::string::npos);
}

TEST(Scripts, ShapingOnBothEndsAndMirrorsOnSpines) {
  ScriptFabric f;
  const std::string host = namespace_tc_batch(*f.t.find("h1"), f.t, f.o);
  EXPECT_TRUE(
      has_line(host, "qdisc add dev t1-nic0 root tbf rate 1000mbit burst 125000 latency 5ms"));
  const std::string spine = namespace_tc_batch(*f.t.find("s1"), f.t, f.o);
  EXPECT_TRUE(has_line(spine, "qdisc add dev t1-l2 root tbf rate 400mbit burst 50000 latency 5ms"));
  // What a spine sends is copied by nftables (mirror_nft_ruleset): no clsact, whose ingress hook
  // would count every LLDP frame the port receives as a discard.
  EXPECT_EQ(spine.find("clsact"), std::string::npos);
  EXPECT_EQ(spine.find("mirred"), std::string::npos);

  f.o.mirror = MirrorDirection::both;
  const std::string both = namespace_tc_batch(*f.t.find("s2"), f.t, f.o);
  EXPECT_TRUE(has_line(both, "qdisc add dev t1-l2 clsact"));
  EXPECT_TRUE(has_line(both,
                       "filter add dev t1-l2 ingress protocol all u32 match u32 0 0 action mirred "
                       "egress mirror dev t1-cap"));
  EXPECT_EQ(both.find(" egress protocol"), std::string::npos);   // sent: nftables' dup
  EXPECT_EQ(both.find("dev t1-cap clsact"), std::string::npos);  // never mirror the mirror
  EXPECT_EQ(both.find("t1-mgmt"), std::string::npos);            // nor management (SNMP) traffic
  f.o.host_mbps = 0;
  const Topology unshaped = build_topology(f.o, 9);
  EXPECT_EQ(namespace_tc_batch(*unshaped.find("h1"), unshaped, f.o), "");
}

TEST(Scripts, ARemoteMirrorCopiesToAVethInsideTheSpine) {
  ScriptFabric f;
  f.o.mirror_mode = MirrorMode::erspan3;
  f.t = build_topology(f.o, 8);
  EXPECT_TRUE(has_line(links_batch(f.t),
                       "link add name t1-span netns rocehil-t1-s1 type veth peer name t1-relay "
                       "netns rocehil-t1-s1"));
  EXPECT_EQ(links_batch(f.t).find("t1-m1"), std::string::npos);
  // The copies go to the span veth (the relay reads its peer), by nftables' dup.
  const std::string spine = mirror_nft_ruleset(*f.t.find("s1"), f.t, f.o);
  EXPECT_NE(spine.find("    type filter hook egress device \"t1-l1\" priority 0; policy accept;\n"
                       "    dup to \"t1-span\"\n"),
            std::string::npos)
      << spine;
  EXPECT_NE(spine.find("    type filter hook egress device \"t1-l2\" priority 0; policy accept;\n"
                       "    dup to \"t1-span\"\n"),
            std::string::npos);
  EXPECT_EQ(spine.find("t1-cap"), std::string::npos);
  EXPECT_EQ(spine.find("device \"t1-span\""), std::string::npos);  // never mirror the mirror
  EXPECT_EQ(spine.find("egress device \"t1-relay\""), std::string::npos);
  const std::string ip = namespace_ip_batch(*f.t.find("s1"), f.o);
  EXPECT_TRUE(has_line(ip, "link set dev t1-span up"));
  EXPECT_TRUE(has_line(ip, "link set dev t1-relay up"));
  // Copies are not fabric traffic: no ECN marking on the mirror veth.
  EXPECT_EQ(namespace_nft_ruleset(*f.t.find("s1"), f.t, f.o).find("t1-span"), std::string::npos);
}

// A spine's egress copies by nftables' dup, one chain per leaf-facing port, never the mirror or
// management port; nothing where it does not send copies.
TEST(Scripts, ASpineCopiesWhatItSendsWithNftablesDup) {
  ScriptFabric f;
  const std::string s1 = mirror_nft_ruleset(*f.t.find("s1"), f.t, f.o);
  EXPECT_EQ(s1,
            "table netdev rocehil_t1_mirror {\n"
            "  chain copy_t1_l1 {\n"
            "    type filter hook egress device \"t1-l1\" priority 0; policy accept;\n"
            "    dup to \"t1-cap\"\n"
            "  }\n"
            "  chain copy_t1_l2 {\n"
            "    type filter hook egress device \"t1-l2\" priority 0; policy accept;\n"
            "    dup to \"t1-cap\"\n"
            "  }\n"
            "}\n");
  EXPECT_EQ(mirror_nft_ruleset(*f.t.find("cap"), f.t, f.o), "");  // local: nothing to drop
  EXPECT_EQ(mirror_nft_ruleset(*f.t.find("l1"), f.t, f.o), "");
  f.o.mirror = MirrorDirection::leaf_to_spine;  // received traffic: tc, not dup
  EXPECT_EQ(mirror_nft_ruleset(*f.t.find("s1"), f.t, f.o), "");
}

TEST(Scripts, ARemoteMirrorDropsGreInTheCaptureNamespaceAndCopiesAtTheRelayPort) {
  ScriptFabric f;
  f.o.mirror = MirrorDirection::leaf_to_spine;  // the copies' own rules are the other test's
  f.o.mirror_mode = MirrorMode::gre;
  f.t = build_topology(f.o, 8);
  EXPECT_EQ(mirror_nft_ruleset(*f.t.find("cap"), f.t, f.o),
            "table ip rocehil_t1_mirror {\n"
            "  chain input {\n"
            "    type filter hook input priority 0; policy accept;\n"
            "    ip protocol gre counter drop\n"
            "  }\n"
            "}\n");
  EXPECT_EQ(mirror_nft_ruleset(*f.t.find("s2"), f.t, f.o),
            "table netdev rocehil_t1_mirror {\n"
            "  chain relay_in {\n"
            "    type filter hook ingress device \"t1-relay\" priority 0; policy drop;\n"
            "  }\n"
            "}\n");
  EXPECT_EQ(mirror_nft_ruleset(*f.t.find("l1"), f.t, f.o), "");
  EXPECT_EQ(mirror_nft_ruleset(*f.t.find("h1"), f.t, f.o), "");
}

TEST(Scripts, EcnMarkingOnEveryTrafficPortOfRoutersOnly) {
  ScriptFabric f;
  const std::string spine = namespace_nft_ruleset(*f.t.find("s1"), f.t, f.o);
  EXPECT_NE(spine.find("table ip rocehil_t1"), std::string::npos);
  EXPECT_NE(spine.find("hook postrouting"), std::string::npos);
  // 300 Mb/s in 1068-byte packets is 35,112 packets/s; a millisecond of them is the threshold.
  EXPECT_NE(spine.find("oifname \"t1-l1\" udp dport 4791 ip ecn { ect0, ect1 } limit rate over "
                       "35112/second burst 35 packets ip ecn set ce"),
            std::string::npos)
      << spine;
  EXPECT_EQ(spine.find("t1-cap"), std::string::npos);
  EXPECT_EQ(spine.find("t1-mgmt"), std::string::npos);
  const std::string leaf = namespace_nft_ruleset(*f.t.find("l2"), f.t, f.o);
  EXPECT_NE(leaf.find("oifname \"t1-h3\""), std::string::npos);
  EXPECT_NE(leaf.find("oifname \"t1-s2\""), std::string::npos);
  EXPECT_EQ(namespace_nft_ruleset(*f.t.find("h1"), f.t, f.o), "");
  f.o.ecn = false;
  EXPECT_EQ(namespace_nft_ruleset(*f.t.find("s1"), f.t, f.o), "");
}

TEST(Scripts, ALosslessFabricForwardsInItsSwitchProcessesNotTheKernel) {
  ScriptFabric f;
  f.o.lossless = true;
  // The kernel keeps the control plane and forwards nothing: the switch process does.
  const auto leaf = sysctls(*f.t.find("l1"), f.o);
  EXPECT_NE(std::find(leaf.begin(), leaf.end(), "net.ipv4.ip_forward=0"), leaf.end());
  EXPECT_EQ(std::find(leaf.begin(), leaf.end(), "net.ipv4.ip_forward=1"), leaf.end());
  // No tbf on a switch port (the process paces it); a host's NIC keeps one, 1 ms deep.
  EXPECT_EQ(namespace_tc_batch(*f.t.find("l1"), f.t, f.o), "");
  EXPECT_EQ(namespace_tc_batch(*f.t.find("s1"), f.t, f.o).find("tbf"), std::string::npos);
  EXPECT_TRUE(has_line(namespace_tc_batch(*f.t.find("h1"), f.t, f.o),
                       "qdisc add dev t1-nic0 root tbf rate 1000mbit burst 125000 latency 1ms"));
  // No rate-based ECN marking: WRED marks by queue depth in the process.
  EXPECT_EQ(namespace_nft_ruleset(*f.t.find("s1"), f.t, f.o), "");
  // Every host's fabric port finishes its frames (checksums, segments) itself.
  const auto host = offload_commands(*f.t.find("h1"), f.o);
  ASSERT_EQ(host.size(), 1u);
  EXPECT_EQ(host[0], (std::vector<std::string>{"ip", "netns", "exec", "rocehil-t1-h1", "ethtool",
                                               "-K", "t1-nic0", "tx", "off", "sg", "off", "tso",
                                               "off", "gso", "off", "gro", "off"}));
  EXPECT_TRUE(offload_commands(*f.t.find("l1"), f.o).empty());
  f.o.lossless = false;
  EXPECT_TRUE(offload_commands(*f.t.find("h1"), f.o).empty());
}

TEST(Scripts, AGuestsNicQueueHoldsBackRatherThanDrops) {
  ScriptFabric f;
  f.o.vm.enabled = true;
  f.o.host_mbps = 200;
  f.t = build_topology(f.o, 8);
  // 4 MiB deep, not a millisecond or five: the guest's rxe recovers badly from a NIC's drops.
  EXPECT_TRUE(has_line(namespace_tc_batch(*f.t.find("h1"), f.t, f.o),
                       "qdisc add dev t1-nic0 root tbf rate 200mbit burst 25000 limit 4194304"));
  // The switches' side of the link is not the guest's NIC: it keeps its tbf.
  EXPECT_TRUE(has_line(namespace_tc_batch(*f.t.find("l1"), f.t, f.o),
                       "qdisc add dev t1-h1 root tbf rate 200mbit burst 25000 latency 5ms"));
}

TEST(Scripts, BurstIsAMillisecondButAtLeastTwoFrames) {
  EXPECT_EQ(burst_bytes(400, 9000), 50000);
  EXPECT_EQ(burst_bytes(10, 9000), 2 * 9018);
  EXPECT_EQ(ecn_mark_packets_per_second(100'000), 11'704'120);
  EXPECT_EQ(ecn_mark_burst_packets(100'000), 11'704);
  EXPECT_EQ(ecn_mark_packets_per_second(1), 117);
  EXPECT_EQ(ecn_mark_burst_packets(1), 2);
}

}  // namespace
}  // namespace rocehil::testbed
