#include "rocehil/testbed/topology.hpp"

#include <arpa/inet.h>
#include <gtest/gtest.h>

#include <map>
#include <set>

namespace rocehil::testbed {
namespace {

TestbedOptions options(int hosts, int racks, int spines) {
  TestbedOptions o;
  o.dir = "/tmp/tb";
  o.id = "abc123";  // the longest id: names must still fit
  o.hosts = hosts;
  o.racks = racks;
  o.spines = spines;
  return o;
}

std::uint32_t parse(const std::string& address) {
  in_addr a{};
  EXPECT_EQ(inet_pton(AF_INET, address.c_str(), &a), 1) << address;
  return ntohl(a.s_addr);
}

bool in_benchmark_range(const std::string& address) {  // 198.18.0.0/15
  return (parse(address) & 0xfffe0000u) == 0xc6120000u;
}

TEST(Topology, DefaultFabricHasEveryRole) {
  const Topology t = build_topology(options(4, 2, 2), 6);
  std::map<Role, int> roles;
  for (const auto& ns : t.namespaces) ++roles[ns.role];
  EXPECT_EQ(roles[Role::host], 4);
  EXPECT_EQ(roles[Role::leaf], 2);
  EXPECT_EQ(roles[Role::spine], 2);
  EXPECT_EQ(roles[Role::capture], 1);
  EXPECT_EQ(t.mgmt_prefix, "198.19.6.0/23");  // built with octet 6: its /23 is .6 and .7
  EXPECT_EQ(t.mirrors.size(), 2u);
  EXPECT_EQ(t.mirrors[0].links, (std::vector<std::string>{"l1-s1", "l2-s1"}));
  // 4 host links, 4 uplinks, 9 management links (4 hosts, capture, 2 leaves, 2 spines), 2
  // mirror links.
  EXPECT_EQ(t.links.size(), 19u);
}

// A remote mirror leaves the switch only encapsulated, on its management port: both ends of
// its mirror veth stay in the spine, and the capture namespace has no mirror interface.
TEST(Topology, ARemoteMirrorIsAVethInsideEachSpine) {
  TestbedOptions o = options(4, 2, 3);
  o.mirror_mode = MirrorMode::erspan3;
  o.mirror_truncate = 128;
  const Topology t = build_topology(o, 6);
  ASSERT_EQ(t.mirrors.size(), 3u);
  const Namespace& cap = *t.find("cap");
  for (const auto& i : cap.interfaces) EXPECT_EQ(i.kind, LinkKind::mgmt) << i.name;
  for (int s = 1; s <= 3; ++s) {
    const MirrorSession& m = t.mirrors[static_cast<std::size_t>(s - 1)];
    const std::string spine = "s" + std::to_string(s);
    EXPECT_EQ(m.spine, spine);
    EXPECT_EQ(m.interface, "abc123-mgmt");  // the capture namespace's management port
    EXPECT_EQ(m.target, "abc123-span");
    ASSERT_TRUE(m.remote);
    EXPECT_EQ(m.remote->mode, MirrorMode::erspan3);
    EXPECT_EQ(m.remote->session, s);
    EXPECT_EQ(m.remote->source, t.find(spine)->mgmt_address);
    EXPECT_EQ(m.remote->source, "198.19.7." + std::to_string(200 + s));
    EXPECT_EQ(m.remote->destination, cap.mgmt_address);
    EXPECT_EQ(m.remote->destination, "198.19.6.2");
    EXPECT_EQ(m.remote->relay_interface, "abc123-relay");
    EXPECT_EQ(m.remote->ports, (std::vector<std::string>{"abc123-l1", "abc123-l2"}));
    EXPECT_EQ(m.remote->truncate, 128);
    int mirror_ports = 0;
    for (const auto& i : t.find(spine)->interfaces) mirror_ports += i.kind == LinkKind::mirror;
    EXPECT_EQ(mirror_ports, 2);
  }
  int spans = 0;
  for (const auto& l : t.links) {
    if (l.kind != LinkKind::mirror) continue;
    ++spans;
    EXPECT_EQ(l.a.ns, l.b.ns) << l.name;
    EXPECT_EQ(l.a.interface, "abc123-span");
    EXPECT_EQ(l.b.interface, "abc123-relay");
  }
  EXPECT_EQ(spans, 3);
  // The same fabric as a local mirror's otherwise.
  EXPECT_EQ(t.links.size(), build_topology(options(4, 2, 3), 6).links.size());
}

TEST(Topology, HostsSpreadEvenlyAndNoRackIsEmpty) {
  for (int hosts = 1; hosts <= 20; ++hosts) {
    for (int racks = 1; racks <= hosts; ++racks) {
      const Topology t = build_topology(options(hosts, racks, 1), 1);
      std::map<int, int> per_rack;
      for (const auto& ns : t.namespaces)
        if (ns.role == Role::host) ++per_rack[ns.rack];
      ASSERT_EQ(static_cast<int>(per_rack.size()), racks) << hosts << " hosts";
      int low = hosts, high = 0;
      for (auto [rack, n] : per_rack) {
        low = std::min(low, n);
        high = std::max(high, n);
      }
      EXPECT_LE(high - low, 1) << hosts << " hosts in " << racks << " racks";
    }
  }
}

void names_fit(const Topology& t) {
  for (const auto& ns : t.namespaces) {
    EXPECT_TRUE(ns.netns.starts_with("rocehil-abc123-")) << ns.netns;
    for (const auto& i : ns.interfaces) {
      EXPECT_LE(i.name.size(), 15u) << i.name;  // IFNAMSIZ - 1
      EXPECT_TRUE(i.name.starts_with("abc123-")) << i.name;
    }
  }
  for (const auto& l : t.links) {
    if (l.a.ns.empty()) {
      EXPECT_LE(l.a.interface.size(), 15u) << l.a.interface;
    }
  }
}

TEST(Topology, NamesFitLinuxAndCarryTheId) {
  TestbedOptions remote = options(max_hosts, max_racks, max_spines);
  remote.mirror_mode = MirrorMode::gre;
  for (const Topology& t : {build_topology(options(max_hosts, max_racks, max_spines), 200),
                            build_topology(remote, 200)}) {
    names_fit(t);
  }
}

TEST(Topology, AddressesAreUniqueAndInTheBenchmarkingRange) {
  // max_hosts needs a /23: the last even octet is the highest it can start at.
  const Topology t = build_topology(options(max_hosts, max_racks, max_spines), 254);
  std::set<std::string> fabric, mgmt;
  for (const auto& ns : t.namespaces) {
    if (!ns.mgmt_address.empty()) {
      EXPECT_TRUE(mgmt.insert(ns.mgmt_address).second) << ns.mgmt_address;
      EXPECT_TRUE(in_benchmark_range(ns.mgmt_address));
    }
    for (const auto& i : ns.interfaces) {
      if (i.address.empty()) continue;
      EXPECT_TRUE(in_benchmark_range(i.address)) << i.address;
      if (!i.peer_address.empty()) {
        EXPECT_TRUE(in_benchmark_range(i.peer_address));
      }
      // Leaves use their rack's gateway on every host port; everything else is unique.
      if (ns.role != Role::leaf || !i.link.starts_with("h")) {
        EXPECT_TRUE(fabric.insert(i.address).second) << i.address << " twice";
      }
    }
  }
  EXPECT_FALSE(mgmt.contains(t.mgmt_gateway));
}

TEST(Topology, ManagementIsASlash23WithHostsBelowAndSwitchesAbove) {
  const Topology small = build_topology(options(244, 4, 2), 8);
  EXPECT_EQ(small.mgmt_prefix, "198.19.8.0/23");
  EXPECT_EQ(small.find("h244")->mgmt_address, "198.19.8.254");
  EXPECT_EQ(small.find("l1")->mgmt_address, "198.19.9.101");
  EXPECT_EQ(small.find("l4")->mgmt_address, "198.19.9.104");
  EXPECT_EQ(small.find("s2")->mgmt_address, "198.19.9.202");
  const Topology t = build_topology(options(256, 8, 2), 8);
  EXPECT_EQ(t.mgmt_prefix, "198.19.8.0/23");
  EXPECT_EQ(t.mgmt_gateway, "198.19.8.1");
  EXPECT_EQ(t.find("h245")->mgmt_address, "198.19.8.255");  // a host address inside a /23
  EXPECT_EQ(t.find("h246")->mgmt_address, "198.19.9.0");
  EXPECT_EQ(t.find("h256")->mgmt_address, "198.19.9.10");
  for (const auto& ns : t.namespaces)
    for (const auto& i : ns.interfaces)
      if (i.link.starts_with("mgmt-")) {
        EXPECT_EQ(i.prefix_length, 23) << i.link;
      }
}

TEST(Topology, EveryNamespaceHasAManagementPortButOnlyHostsAndCaptureRunSshd) {
  const Topology t = build_topology(options(4, 2, 2), 8);
  for (const auto& ns : t.namespaces) {
    EXPECT_FALSE(ns.mgmt_address.empty()) << ns.name;
    int mgmt_ports = 0;
    for (const auto& i : ns.interfaces) mgmt_ports += i.kind == LinkKind::mgmt ? 1 : 0;
    EXPECT_EQ(mgmt_ports, 1) << ns.name;
    EXPECT_EQ(runs_sshd(ns), ns.role == Role::host || ns.role == Role::capture) << ns.name;
    EXPECT_EQ(is_switch(ns), ns.role == Role::leaf || ns.role == Role::spine) << ns.name;
    EXPECT_EQ(runs_lldpd(ns), ns.role != Role::capture) << ns.name;
  }
  // A spine's fabric ports are its leaf links: not its management port, not its mirror port.
  std::vector<std::string> spine_ports;
  for (const Interface* i : fabric_interfaces(*t.find("s1"))) spine_ports.push_back(i->name);
  EXPECT_EQ(spine_ports, (std::vector<std::string>{"abc123-l1", "abc123-l2"}));
  std::vector<std::string> leaf_ports;
  for (const Interface* i : fabric_interfaces(*t.find("l2"))) leaf_ports.push_back(i->name);
  EXPECT_EQ(leaf_ports,
            (std::vector<std::string>{"abc123-h3", "abc123-h4", "abc123-s1", "abc123-s2"}));
  EXPECT_TRUE(fabric_interfaces(*t.find("cap")).empty());
}

TEST(Topology, SwitchManagementAddressesNeverMeetHostOnesAtAnySize) {
  const Topology t = build_topology(options(max_hosts, max_racks, max_spines), 254);
  std::set<std::string> addresses{t.mgmt_gateway};
  for (const auto& ns : t.namespaces)
    EXPECT_TRUE(addresses.insert(ns.mgmt_address).second) << ns.name << " " << ns.mgmt_address;
  EXPECT_EQ(t.find("h256")->mgmt_address, "198.19.255.10");
  EXPECT_EQ(t.find("l64")->mgmt_address, "198.19.255.164");
  EXPECT_EQ(t.find("s32")->mgmt_address, "198.19.255.232");
}

TEST(Topology, PointToPointEndsPointAtEachOther) {
  const Topology t = build_topology(options(6, 3, 4), 1);
  std::map<std::string, std::vector<const Interface*>> by_link;
  for (const auto& ns : t.namespaces)
    for (const auto& i : ns.interfaces) by_link[i.link].push_back(&i);
  for (const auto& l : t.links) {
    if (l.kind != LinkKind::host && l.kind != LinkKind::uplink) continue;
    const auto& ends = by_link[l.name];
    ASSERT_EQ(ends.size(), 2u) << l.name;
    EXPECT_EQ(ends[0]->peer_address, ends[1]->address) << l.name;
    EXPECT_EQ(ends[1]->peer_address, ends[0]->address) << l.name;
  }
}

TEST(Topology, LeavesHaveOneEcmpRoutePerOtherRackOverEverySpine) {
  const Topology t = build_topology(options(6, 3, 4), 1);
  const Namespace* leaf = t.find("l2");
  ASSERT_NE(leaf, nullptr);
  ASSERT_EQ(leaf->routes.size(), 2u);
  EXPECT_EQ(leaf->routes[0].prefix, "198.18.1.0/24");
  EXPECT_EQ(leaf->routes[1].prefix, "198.18.3.0/24");
  for (const auto& r : leaf->routes) {
    ASSERT_EQ(r.next_hops.size(), 4u);
    EXPECT_EQ(r.next_hops[0], "198.18.101.5");  // spine 1's end of the l2-s1 link
    EXPECT_EQ(r.devices[3], "abc123-s4");
  }
  const Namespace* spine = t.find("s3");
  ASSERT_EQ(spine->routes.size(), 3u);
  EXPECT_EQ(spine->routes[1].next_hops, std::vector<std::string>{"198.18.103.4"});
}

TEST(Topology, HostsRouteTheFabricThroughTheirLeaf) {
  const Topology t = build_topology(options(4, 2, 2), 0);
  const Namespace* h3 = t.find("h3");
  EXPECT_EQ(h3->rack, 2);
  EXPECT_EQ(h3->fabric_address, "198.18.2.11");
  EXPECT_EQ(h3->mgmt_address, "198.19.0.13");
  ASSERT_EQ(h3->routes.size(), 1u);
  EXPECT_EQ(h3->routes[0].prefix, "198.18.0.0/16");
  EXPECT_EQ(h3->routes[0].next_hops[0], "198.18.2.1");
}

TEST(Topology, ManagementSubnetAvoidsRoutesInUse) {
  const auto first = choose_mgmt_octet("t1", {}, 24);
  ASSERT_TRUE(first);
  const std::string taken = "198.19." + std::to_string(*first) + ".0/24";
  const auto second = choose_mgmt_octet("t1", {"default", taken, "10.0.0.0/8"}, 24);
  ASSERT_TRUE(second);
  EXPECT_NE(*second, *first);
  // A host route inside the /24 makes it taken as well; a covering /16 takes them all.
  const std::string host_route = "198.19." + std::to_string(*first) + ".9";
  EXPECT_NE(choose_mgmt_octet("t1", {host_route}, 24), first);
  EXPECT_FALSE(choose_mgmt_octet("t1", {"198.19.0.0/16"}));
  EXPECT_FALSE(choose_mgmt_octet("t1", {"198.16.0.0/12"}));
}

TEST(Topology, ASlash23StartsAtAnEvenOctetWithBothHalvesFree) {
  const auto first = choose_mgmt_octet("t1", {});  // the testbed's: always a /23
  EXPECT_EQ(first, choose_mgmt_octet("t1", {}, 23));
  ASSERT_TRUE(first);
  EXPECT_EQ(*first % 2, 0);
  // Its upper half taken: another /23.
  const std::string upper = "198.19." + std::to_string(*first + 1) + ".0/24";
  const auto second = choose_mgmt_octet("t1", {upper}, 23);
  ASSERT_TRUE(second);
  EXPECT_EQ(*second % 2, 0);
  EXPECT_NE(*second, *first);
}

}  // namespace
}  // namespace rocehil::testbed
