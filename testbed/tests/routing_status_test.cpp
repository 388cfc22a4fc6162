#include "rocehil/testbed/routing_status.hpp"

#include <gtest/gtest.h>

#include <fstream>

namespace rocehil::testbed {
namespace {

// What FRR 8.4.4's vtysh printed in leaf l1 of a testbed brought up with --routing bgp (2 racks,
// 2 spines, id t1): converged, and with l1-s1 taken down (tests/data/frr/SOURCES.md).
nlohmann::json frr_json(const std::string& name) {
  std::ifstream in(std::string(ROCEHIL_TESTBED_DATA) + "/frr/" + name);
  EXPECT_TRUE(in) << name;
  return nlohmann::json::parse(in);
}

struct Fabric {
  TestbedOptions o;
  Topology t;
  Fabric() {
    o.dir = "/tmp/tb";
    o.id = "t1";
    o.routing = Routing::bgp;
    t = build_topology(o, 8);
  }
  const Namespace& ns(const char* name) const { return *t.find(name); }
  SwitchRouting read(const char* name, const std::string& state) const {
    const Namespace& n = ns(name);
    SwitchRouting r;
    r.sessions = parse_sessions(bgp_neighbors(n, t), frr_json(state + ".bgp_summary.json"),
                                frr_json(state + ".bfd_peers.json"));
    r.routes = parse_rack_routes(routed_rack_prefixes(n, t), frr_json(state + ".ip_route.json"));
    return r;
  }
};

TEST(RoutingStatus, LeavesRouteToTheOtherRacksAndSpinesToEveryRack) {
  TestbedOptions o;
  o.dir = "/tmp/tb";
  o.id = "t1";
  o.hosts = 6;
  o.racks = 3;
  o.spines = 4;
  const Topology t = build_topology(o, 8);
  EXPECT_EQ(routed_rack_prefixes(*t.find("l2"), t),
            (std::vector<std::string>{"198.18.1.0/24", "198.18.3.0/24"}));
  EXPECT_EQ(routed_rack_prefixes(*t.find("s4"), t),
            (std::vector<std::string>{"198.18.1.0/24", "198.18.2.0/24", "198.18.3.0/24"}));
  EXPECT_TRUE(routed_rack_prefixes(*t.find("h1"), t).empty());
  EXPECT_EQ(expected_next_hops(*t.find("l1"), t), 4u);
  EXPECT_EQ(expected_next_hops(*t.find("s1"), t), 1u);
}

TEST(RoutingStatus, ConvergedLeafHasEverySessionUpAndBothSpinesAsNextHops) {
  Fabric f;
  const SwitchRouting r = f.read("l1", "l1_converged");
  ASSERT_EQ(r.sessions.size(), 2u);
  for (const auto& s : r.sessions) {
    EXPECT_EQ(s.state, "Established") << s.neighbor.address;
    EXPECT_EQ(s.bfd, "up") << s.neighbor.address;
    EXPECT_EQ(s.prefixes_received, 1) << s.neighbor.address;
    EXPECT_GT(s.uptime_ms, 0) << s.neighbor.address;
  }
  EXPECT_EQ(r.sessions[0].neighbor.name, "s1");
  EXPECT_EQ(r.sessions[1].neighbor.address, "198.18.102.3");
  ASSERT_EQ(r.routes.size(), 1u);
  EXPECT_EQ(r.routes[0].prefix, "198.18.2.0/24");
  EXPECT_EQ(r.routes[0].protocol, "bgp");
  EXPECT_TRUE(r.routes[0].installed);
  ASSERT_EQ(r.routes[0].next_hops.size(), 2u);
  EXPECT_EQ(r.routes[0].next_hops[0].address, "198.18.101.3");
  EXPECT_EQ(r.routes[0].next_hops[0].interface, "t1-s1");
  EXPECT_EQ(r.routes[0].next_hops[1].address, "198.18.102.3");
  EXPECT_TRUE(routing_problems(f.ns("l1"), f.t, r).empty());
}

TEST(RoutingStatus, LinkDownLeavesOneSessionAndOneNextHopAndSaysSo) {
  Fabric f;
  const SwitchRouting r = f.read("l1", "l1_link_down");
  ASSERT_EQ(r.sessions.size(), 2u);
  EXPECT_NE(r.sessions[0].state, "Established");
  EXPECT_EQ(r.sessions[0].uptime_ms, 0);
  EXPECT_EQ(r.sessions[0].bfd, "down");
  EXPECT_EQ(r.sessions[1].state, "Established");
  EXPECT_EQ(r.sessions[1].bfd, "up");
  ASSERT_EQ(r.routes.size(), 1u);
  ASSERT_EQ(r.routes[0].next_hops.size(), 1u);
  EXPECT_EQ(r.routes[0].next_hops[0].address, "198.18.102.3");
  const auto problems = routing_problems(f.ns("l1"), f.t, r);
  ASSERT_EQ(problems.size(), 2u);
  EXPECT_EQ(problems[0], "session to s1 (198.18.101.3 over l1-s1) is " + r.sessions[0].state);
  EXPECT_EQ(problems[1], "198.18.2.0/24 has 1 of 2 next hops");
}

TEST(RoutingStatus, BgpdWithoutARouterYetReadsAsNotConfiguredAndNoRoute) {
  Fabric f;
  const auto sessions = parse_sessions(bgp_neighbors(f.ns("s1"), f.t), nlohmann::json::object(),
                                       nlohmann::json::array());
  ASSERT_EQ(sessions.size(), 2u);
  EXPECT_EQ(sessions[0].state, "not configured");
  EXPECT_EQ(sessions[0].bfd, "");
  SwitchRouting r;
  r.sessions = sessions;
  r.routes = parse_rack_routes(routed_rack_prefixes(f.ns("s1"), f.t), nlohmann::json::object());
  const auto problems = routing_problems(f.ns("s1"), f.t, r);
  EXPECT_EQ(problems.back(), "no route to 198.18.2.0/24 in the kernel");
  EXPECT_EQ(problems.size(), 4u);
  r.problem = "vtysh: failed to connect";
  EXPECT_EQ(routing_problems(f.ns("s1"), f.t, r), std::vector<std::string>{r.problem});
}

}  // namespace
}  // namespace rocehil::testbed
