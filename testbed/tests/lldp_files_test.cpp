#include "rocehil/testbed/lldp_files.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>

namespace rocehil::testbed {
namespace {

struct LldpFabric {
  TestbedOptions o;
  Topology t;
  TestbedPaths paths{"/srv/tb"};
  LldpFabric() {
    o.dir = "/srv/tb";
    o.id = "t1";
    t = build_topology(o, 4);
  }
};

TEST(LldpFiles, ConfigNamesTheSystemAndSendsInterfaceNamesOften) {
  LldpFabric f;
  const std::string conf = lldpd_conf(*f.t.find("s2"));
  EXPECT_NE(conf.find("\nconfigure system hostname s2\n"), std::string::npos) << conf;
  EXPECT_NE(conf.find("\nconfigure system ip management pattern 198.19.5.202\n"),
            std::string::npos);
  EXPECT_NE(conf.find("\nconfigure lldp portidsubtype ifname\n"), std::string::npos);
  EXPECT_NE(conf.find("\nconfigure lldp tx-interval 30\n"), std::string::npos);
}

TEST(LldpFiles, LldpdSpeaksOnFabricPortsAndSwitchesRegisterWithSnmpd) {
  LldpFabric f;
  const auto leaf = lldpd_argv(*f.t.find("l1"), f.paths);
  const auto ports = std::find(leaf.begin(), leaf.end(), "-I");
  ASSERT_NE(ports, leaf.end());
  EXPECT_EQ(*(ports + 1), "t1-h1,t1-h2,t1-s1,t1-s2");  // not t1-mgmt
  const auto agentx = std::find(leaf.begin(), leaf.end(), "-X");
  ASSERT_NE(agentx, leaf.end());
  EXPECT_EQ(*(agentx + 1), "/run/rocehil/rocehil-t1-l1.agentx");
  const auto spine = lldpd_argv(*f.t.find("s1"), f.paths);
  EXPECT_EQ(*(std::find(spine.begin(), spine.end(), "-I") + 1), "t1-l1,t1-l2");  // not t1-cap
  const auto host = lldpd_argv(*f.t.find("h1"), f.paths);
  EXPECT_EQ(*(std::find(host.begin(), host.end(), "-I") + 1), "t1-nic0");
  EXPECT_EQ(std::find(host.begin(), host.end(), "-x"), host.end());  // no snmpd in a host
  EXPECT_EQ(host[3], "rocehil-t1-h1");
}

TEST(LldpFiles, ExpectedNeighboursAreTheFarEndsOfFabricLinks) {
  LldpFabric f;
  const auto leaf = expected_lldp_neighbors(*f.t.find("l2"), f.t);
  EXPECT_EQ(leaf, (std::vector<LldpNeighbor>{{"t1-h3", "h3", "t1-nic0"},
                                             {"t1-h4", "h4", "t1-nic0"},
                                             {"t1-s1", "s1", "t1-l2"},
                                             {"t1-s2", "s2", "t1-l2"}}));
  const auto host = expected_lldp_neighbors(*f.t.find("h1"), f.t);
  EXPECT_EQ(host, (std::vector<LldpNeighbor>{{"t1-nic0", "l1", "t1-h1"}}));
}

// `lldpcli -f json0 show neighbors` of lldpd 1.0.16, shortened.
constexpr const char* json0_sample = R"({"lldp": [{"interface": [
  {"name": "t1-h1", "via": "LLDP", "rid": "1", "age": "0 day, 00:01:47",
   "chassis": [{"id": [{"type": "mac", "value": "7e:b8:cb:da:a3:11"}], "name": [{"value": "h1"}],
                "mgmt-ip": [{"value": "198.19.4.11"}]}],
   "port": [{"id": [{"type": "ifname", "value": "t1-nic0"}], "descr": [{"value": "t1-nic0"}],
             "ttl": [{"value": "20"}]}]},
  {"name": "t1-s1", "via": "LLDP", "rid": "2",
   "chassis": [{"id": [{"type": "mac", "value": "76:ea:39:7c:47:e7"}], "name": [{"value": "s1"}]}],
   "port": [{"id": [{"type": "ifname", "value": "t1-l1"}]}]}]}]})";

TEST(LldpFiles, NeighboursParseFromJson0AndMissingOnesAreNamed) {
  const auto seen = parse_lldp_neighbors(nlohmann::json::parse(json0_sample));
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[0], (LldpNeighbor{"t1-h1", "h1", "t1-nic0"}));
  EXPECT_EQ(seen[1], (LldpNeighbor{"t1-s1", "s1", "t1-l1"}));
  EXPECT_TRUE(parse_lldp_neighbors(nlohmann::json::parse(R"({"lldp": [{}]})")).empty());
  EXPECT_TRUE(parse_lldp_neighbors(nlohmann::json::parse("[]")).empty());

  LldpFabric f;
  const auto missing = missing_lldp_neighbors(expected_lldp_neighbors(*f.t.find("l1"), f.t), seen);
  EXPECT_EQ(missing, (std::vector<std::string>{"h2 on t1-h2", "s2 on t1-s2"}));
}

TEST(LldpFiles, ConfigurationIsAppliedWhenEveryLineOfTheFileShows) {
  LldpFabric f;
  const Namespace& l1 = *f.t.find("l1");
  const auto config = [](const char* hostname, const char* delay) {
    return nlohmann::json::parse(fmt::format(
        R"({{"configuration": [{{"config": [{{"tx-delay": [{{"value": "{}"}}],
            "hostname": [{{"value": "{}"}}], "lldp-portid-type": [{{"value": "ifname"}}]}}]}}]}})",
        delay, hostname));
  };
  EXPECT_TRUE(lldpd_configured(config("l1", "30"), l1));
  // The host name undone by an `update` that raced the file: not applied.
  EXPECT_FALSE(lldpd_configured(config("(none)", "30"), l1));
  // lldpd's own defaults before its file is read (interval 30, but no name): not applied.
  EXPECT_FALSE(lldpd_configured(config("l1", "5"), l1));
  EXPECT_FALSE(lldpd_configured(nlohmann::json::parse("{}"), l1));
}

}  // namespace
}  // namespace rocehil::testbed
