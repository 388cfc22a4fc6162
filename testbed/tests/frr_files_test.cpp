#include "rocehil/testbed/frr_files.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "has_line.hpp"
#include "rocehil/testbed/scripts.hpp"
#include "tools/process.hpp"

namespace rocehil::testbed {
namespace {

using testing::has_line;

// 4 hosts, 2 racks, 2 spines, the management network at 198.19.8.0/23.
struct BgpFabric {
  TestbedOptions o;
  Topology t;
  explicit BgpFabric(int racks = 2, int spines = 2) {
    o.dir = "/tmp/tb";
    o.id = "t1";
    o.racks = racks;
    o.spines = spines;
    o.routing = Routing::bgp;
    t = build_topology(o, 8);
  }
  const Namespace& ns(const char* name) const { return *t.find(name); }
};

TEST(FrrFiles, SpinesShareOneAsnAndEachLeafHasItsOwn) {
  BgpFabric f(3, 2);
  EXPECT_EQ(bgp_asn(f.ns("s1")), 65000);
  EXPECT_EQ(bgp_asn(f.ns("s2")), 65000);
  EXPECT_EQ(bgp_asn(f.ns("l1")), 65101);
  EXPECT_EQ(bgp_asn(f.ns("l3")), 65103);
  EXPECT_EQ(bgp_asn(f.ns("h1")), 0);
  EXPECT_EQ(bgp_asn(f.ns("cap")), 0);
}

TEST(FrrFiles, EveryUplinkIsOneSessionOverItsOwnAddresses) {
  BgpFabric f;
  // Leaf r's end of l r-s s is 198.18.(100+s).(2r), the spine's .(2r+1).
  EXPECT_EQ(bgp_neighbors(f.ns("l1"), f.t),
            (std::vector<BgpNeighbor>{{"198.18.101.3", 65000, "s1", "t1-s1", "l1-s1"},
                                      {"198.18.102.3", 65000, "s2", "t1-s2", "l1-s2"}}));
  EXPECT_EQ(bgp_neighbors(f.ns("s2"), f.t),
            (std::vector<BgpNeighbor>{{"198.18.102.2", 65101, "l1", "t1-l1", "l1-s2"},
                                      {"198.18.102.4", 65102, "l2", "t1-l2", "l2-s2"}}));
  EXPECT_TRUE(bgp_neighbors(f.ns("h1"), f.t).empty());
  // Each session's two ends name each other.
  for (const auto& n : bgp_neighbors(f.ns("l2"), f.t)) {
    const auto back = bgp_neighbors(f.ns(n.name.c_str()), f.t);
    EXPECT_EQ(
        std::count_if(back.begin(), back.end(),
                      [&](const BgpNeighbor& b) { return b.name == "l2" && b.link == n.link; }),
        1);
  }
}

TEST(FrrFiles, LeafAnnouncesItsRackAndMultipathsOverEverySpine) {
  BgpFabric f(2, 3);
  const std::string conf = frr_config("bgpd", f.ns("l2"), f.t, f.o);
  EXPECT_EQ(conf.rfind("frr defaults datacenter\n", 0), 0u) << conf;
  EXPECT_TRUE(has_line(conf, "hostname l2"));
  EXPECT_TRUE(has_line(conf, "router bgp 65102"));
  EXPECT_TRUE(has_line(conf, " bgp router-id " + f.ns("l2").mgmt_address));
  EXPECT_TRUE(has_line(conf, " no bgp ebgp-requires-policy"));
  EXPECT_TRUE(has_line(conf, " bgp bestpath as-path multipath-relax"));
  EXPECT_TRUE(has_line(conf, " neighbor fabric bfd profile fabric"));
  for (int s = 1; s <= 3; ++s) {
    const std::string peer = fmt::format("198.18.{}.5", 100 + s);
    EXPECT_TRUE(has_line(conf, " neighbor " + peer + " remote-as 65000")) << conf;
    EXPECT_TRUE(has_line(conf, " neighbor " + peer + " peer-group fabric")) << conf;
  }
  EXPECT_TRUE(has_line(conf, "  network 198.18.2.0/24"));
  EXPECT_TRUE(has_line(conf, "  maximum-paths 3"));
  // Its own rack's /24, nothing else.
  std::size_t networks = 0;
  for (auto at = conf.find("  network "); at != std::string::npos;
       at = conf.find("  network ", at + 1))
    ++networks;
  EXPECT_EQ(networks, 1u) << conf;
  EXPECT_EQ(conf.find("network 198.18.1.0/24"), std::string::npos);
}

TEST(FrrFiles, SpineHasOneSessionPerLeafAndAnnouncesNothingOfItsOwn) {
  BgpFabric f(3, 2);
  const std::string conf = frr_config("bgpd", f.ns("s1"), f.t, f.o);
  EXPECT_TRUE(has_line(conf, "router bgp 65000"));
  EXPECT_TRUE(has_line(conf, " neighbor 198.18.101.2 remote-as 65101"));
  EXPECT_TRUE(has_line(conf, " neighbor 198.18.101.4 remote-as 65102"));
  EXPECT_TRUE(has_line(conf, " neighbor 198.18.101.6 remote-as 65103"));
  EXPECT_EQ(conf.find("  network "), std::string::npos) << conf;
}

TEST(FrrFiles, BfdProfileCarriesTheTimers) {
  BgpFabric f;
  f.o.bfd = {250, 4};
  const std::string conf = frr_config("bfdd", f.ns("l1"), f.t, f.o);
  EXPECT_TRUE(has_line(conf, " profile fabric"));
  EXPECT_TRUE(has_line(conf, "  detect-multiplier 4"));
  EXPECT_TRUE(has_line(conf, "  receive-interval 250"));
  EXPECT_TRUE(has_line(conf, "  transmit-interval 250"));
  // Each daemon reads only its own commands.
  EXPECT_EQ(conf.find("router bgp"), std::string::npos);
  const std::string zebra = frr_config("zebra", f.ns("l1"), f.t, f.o);
  EXPECT_TRUE(has_line(zebra, "no zebra nexthop kernel enable"));
  EXPECT_EQ(zebra.find("bfd"), std::string::npos);
  EXPECT_EQ(zebra.find("router"), std::string::npos);
}

TEST(FrrFiles, DaemonsRunInTheSwitchNamespaceWithEveryPathTheirOwn) {
  BgpFabric f;
  const TestbedPaths paths{"/tmp/tb"};
  const auto argv = frr_argv("bfdd", f.ns("s1"), paths);
  const std::vector<std::string> expected = {"ip",
                                             "netns",
                                             "exec",
                                             "rocehil-t1-s1",
                                             "/usr/lib/frr/bfdd",
                                             "--daemon",
                                             "-u",
                                             "root",
                                             "-g",
                                             "frrvty",
                                             "-P",
                                             "0",
                                             "-f",
                                             "/tmp/tb/frr/rocehil-t1-s1.bfdd.conf",
                                             "-i",
                                             "/tmp/tb/run/rocehil-t1-s1.bfdd.pid",
                                             "-z",
                                             "/run/rocehil/rocehil-t1-s1.frr/zserv.api",
                                             "--vty_socket",
                                             "/run/rocehil/rocehil-t1-s1.frr",
                                             "--log",
                                             "file:/tmp/tb/run/rocehil-t1-s1.bfdd.log",
                                             "--bfdctl",
                                             "/run/rocehil/rocehil-t1-s1.frr/bfdd.sock"};
  EXPECT_EQ(argv, expected);
  const auto zebra = frr_argv("zebra", f.ns("l2"), paths);
  EXPECT_EQ(std::find(zebra.begin(), zebra.end(), "--bfdctl"), zebra.end());
  EXPECT_EQ(zebra[4], "/usr/lib/frr/zebra");
  // down finds a daemon whose namespace is gone by the testbed's name on its command line.
  for (const auto& a : {zebra[13], zebra[15]})
    EXPECT_NE(a.find("rocehil-t1-l2"), std::string::npos);
  EXPECT_EQ(vtysh_argv(f.ns("l1"), "bgpd", "show bgp summary json"),
            (std::vector<std::string>{"vtysh", "--vty_socket", "/run/rocehil/rocehil-t1-l1.frr",
                                      "-d", "bgpd", "-c", "show bgp summary json"}));
}

TEST(FrrFiles, SwitchesGetNoStaticRoutesUnderBgpHostsKeepTheirs) {
  BgpFabric f;
  EXPECT_EQ(namespace_ip_batch(f.ns("l1"), f.o).find("route add"), std::string::npos);
  EXPECT_EQ(namespace_ip_batch(f.ns("s1"), f.o).find("route add"), std::string::npos);
  EXPECT_TRUE(has_line(namespace_ip_batch(f.ns("h1"), f.o),
                       "route add 198.18.0.0/16 via 198.18.1.1 dev t1-nic0"));
  f.o.routing = Routing::static_routes;
  EXPECT_NE(namespace_ip_batch(f.ns("l1"), f.o).find("route add 198.18.2.0/24 nexthop"),
            std::string::npos);
}

// FRR's own parser, where Debian's frr is installed: each file read in dry-run mode (-C) must
// give no error, so no command the generator writes is one FRR 8.4 does not know.
TEST(FrrFiles, Frr84AcceptsEveryFileWithoutAnError) {
  if (::geteuid() != 0 || !std::filesystem::exists("/usr/lib/frr/bgpd"))
    GTEST_SKIP() << "needs root and Debian's frr";
  BgpFabric f(2, 2);
  const std::string dir = ::testing::TempDir() + "frr_files_test";
  std::filesystem::create_directories(dir);
  for (const char* name : {"l1", "s2"}) {
    for (auto daemon : frr_daemons) {
      const std::string file = fmt::format("{}/{}.{}.conf", dir, name, daemon);
      std::ofstream(file) << frr_config(daemon, f.ns(name), f.t, f.o);
      const CommandResult r = run({fmt::format("/usr/lib/frr/{}", daemon), "-C", "-u", "root", "-g",
                                   "frrvty", "-P", "0", "-f", file, "-i", dir + "/dry.pid", "-z",
                                   dir + "/zserv.api", "--vty_socket", dir, "--log", "stdout"});
      EXPECT_EQ(r.exit_status, 0) << daemon << ": " << r.err;
      for (const auto* text : {&r.out, &r.err}) {
        EXPECT_EQ(text->find("No such command"), std::string::npos) << daemon << ": " << *text;
        EXPECT_EQ(text->find("% "), std::string::npos) << daemon << ": " << *text;
        EXPECT_EQ(text->find("rror"), std::string::npos) << daemon << ": " << *text;
      }
    }
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace rocehil::testbed
