#include "rocehil/testbed/inventory_file.hpp"

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include "rocehil/inventory/load.hpp"
#include "rocehil/inventory/selection.hpp"

namespace rocehil::testbed {
namespace {

// Five hosts in two racks behind three spines, in /srv/tb.
TestbedOptions five_hosts() {
  TestbedOptions o;
  o.dir = "/srv/tb";
  o.id = "t1";
  o.hosts = 5;
  o.racks = 2;
  o.spines = 3;
  return o;
}

TEST(InventoryFile, ParsesBackToTheTopology) {
  TestbedOptions o = five_hosts();
  o.host_mbps = 2000;
  o.uplink_mbps = 500;
  const Topology t = build_topology(o, 4);
  const YAML::Node y = YAML::Load(inventory_yaml(t, o, TestbedPaths{o.dir}));

  EXPECT_EQ(y["schema_version"].as<int>(), 1);
  EXPECT_EQ(y["defaults"]["ssh"]["user"].as<std::string>(), "root");
  EXPECT_EQ(y["defaults"]["ssh"]["identity"].as<std::string>(), "/srv/tb/ssh/id_ed25519");
  EXPECT_EQ(y["defaults"]["provider"].as<std::string>(), "soft");

  const YAML::Node hosts = y["hosts"];
  ASSERT_EQ(hosts.size(), 6u);  // five hosts and the capture server
  int checked = 0;
  for (const auto& h : hosts) {
    const Namespace* ns = t.find(h["name"].as<std::string>());
    ASSERT_NE(ns, nullptr);
    EXPECT_EQ(h["address"].as<std::string>(), ns->mgmt_address);
    EXPECT_EQ(h["netns"].as<std::string>(), ns->netns);
    if (ns->role != Role::host) continue;
    EXPECT_EQ(h["rack"].as<std::string>(), "r" + std::to_string(ns->rack));
    ASSERT_EQ(h["nics"].size(), 1u);
    EXPECT_EQ(h["nics"][0]["ip"].as<std::string>(), ns->fabric_address);
    EXPECT_EQ(h["nics"][0]["netdev"].as<std::string>(), "t1-nic0");
    EXPECT_DOUBLE_EQ(h["nics"][0]["link_gbps"].as<double>(), 2.0);
    ++checked;
  }
  EXPECT_EQ(checked, 5);

  EXPECT_EQ(y["racks"].size(), 2u);
  EXPECT_EQ(y["racks"][1]["leaf"].as<std::string>(), "l2");
  const YAML::Node switches = y["switches"];
  ASSERT_EQ(switches.size(), 5u);
  for (const auto& sw : switches) {
    const Namespace* ns = t.find(sw["name"].as<std::string>());
    ASSERT_NE(ns, nullptr);
    EXPECT_EQ(sw["address"].as<std::string>(), ns->mgmt_address);
    EXPECT_EQ(sw["snmp"]["version"].as<std::string>(), "2c");
    EXPECT_EQ(sw["snmp"]["community_file"].as<std::string>(), "/srv/tb/snmp/community");
    EXPECT_EQ(sw["snmp"]["write_community_file"].as<std::string>(), "/srv/tb/snmp/write_community");
  }
  EXPECT_EQ(switches[0]["address"].as<std::string>(), "198.19.5.101");  // l1, built with 4
  EXPECT_EQ(y["links"].size(), 5u + 6u);
  const YAML::Node captures = y["captures"];
  ASSERT_EQ(captures.size(), 3u);
  EXPECT_EQ(captures[2]["interface"].as<std::string>(), "t1-m3");
  EXPECT_EQ(captures[2]["host"].as<std::string>(), "cap");
  EXPECT_EQ(captures[2]["mirrors"]["links"][1].as<std::string>(), "l2-s3");
  EXPECT_EQ(captures[2]["mirrors"]["direction"].as<std::string>(), "spine-to-leaf");
  EXPECT_DOUBLE_EQ(captures[0]["link_gbps"].as<double>(), 0.5);
}

// The file the testbed writes is the inventory a site would write: the loader must take it as it
// is, with every value the testbed meant.
TEST(InventoryFile, LoadsWithTheInventoryLoader) {
  TestbedOptions o = five_hosts();
  o.uplink_mbps = 400;
  o.agent = "/opt/rocehil/bin/rocehil";
  const Topology t = build_topology(o, 4);
  const auto loaded =
      inventory::parse_inventory(inventory_yaml(t, o, TestbedPaths{o.dir}), "tb.yaml");
  for (const auto& d : loaded.diagnostics) ADD_FAILURE() << inventory::to_string(d);
  ASSERT_TRUE(loaded.inventory.has_value());
  const inventory::Inventory& inv = *loaded.inventory;
  EXPECT_EQ(inv.hosts.size(), 6u);
  EXPECT_EQ(inv.defaults.agent, "/opt/rocehil/bin/rocehil");
  for (const auto& ns : t.namespaces) {
    if (ns.role != Role::host) continue;
    const inventory::Host* h = inv.find_host(ns.name);
    ASSERT_NE(h, nullptr) << ns.name;
    EXPECT_EQ(h->address, ns.mgmt_address);
    EXPECT_EQ(h->provider, inventory::Provider::soft);
    EXPECT_EQ(h->agent, "/opt/rocehil/bin/rocehil");
    EXPECT_EQ(h->ssh.identity, "/srv/tb/ssh/id_ed25519");
    EXPECT_EQ(h->ssh.known_hosts, "/srv/tb/ssh/known_hosts");
    ASSERT_EQ(h->nics.size(), 1u);
    EXPECT_EQ(h->nics[0].ip, ns.fabric_address);
    EXPECT_EQ(h->rack, "r" + std::to_string(ns.rack));
  }
  ASSERT_EQ(inv.switches.size(), 5u);
  for (const auto& ns : t.namespaces) {
    if (!is_switch(ns)) continue;
    const inventory::Switch* sw = inv.find_switch(ns.name);
    ASSERT_NE(sw, nullptr) << ns.name;
    EXPECT_EQ(sw->address, ns.mgmt_address);
    ASSERT_TRUE(sw->snmp.has_value()) << ns.name;
    EXPECT_EQ(sw->snmp->version, inventory::SnmpSettings::Version::v2c);
    EXPECT_EQ(sw->snmp->community_file, "/srv/tb/snmp/community");
    EXPECT_EQ(sw->snmp->write_community_file, "/srv/tb/snmp/write_community");
    EXPECT_TRUE(sw->snmp->can_write());
  }
  ASSERT_EQ(inv.captures.size(), 3u);
  EXPECT_EQ(inv.captures[1].mirrors.switch_name, "s2");
  EXPECT_FALSE(inv.captures[1].remote.has_value());  // a local mirror port
  EXPECT_DOUBLE_EQ(inv.captures[1].link_gbps, 0.4);
  EXPECT_EQ(inventory::select_hosts(inv, "label:gpu@1/rack").size(), 2u);
}

TEST(InventoryFile, ARemoteMirrorArrivesOnTheCaptureServersManagementPort) {
  TestbedOptions o = five_hosts();
  o.uplink_mbps = 400;
  o.mirror_mode = MirrorMode::erspan3;
  const Topology t = build_topology(o, 4);
  const YAML::Node captures = YAML::Load(inventory_yaml(t, o, TestbedPaths{o.dir}))["captures"];
  ASSERT_EQ(captures.size(), 3u);
  for (std::size_t s = 0; s < 3; ++s) {
    const YAML::Node c = captures[s];
    const std::string spine = "s" + std::to_string(s + 1);
    EXPECT_EQ(c["name"].as<std::string>(), spine + "-mirror");
    EXPECT_EQ(c["host"].as<std::string>(), "cap");
    EXPECT_EQ(c["interface"].as<std::string>(), "t1-mgmt");
    EXPECT_DOUBLE_EQ(c["link_gbps"].as<double>(), 0.4);
    EXPECT_EQ(c["mirrors"]["switch"].as<std::string>(), spine);
    EXPECT_EQ(c["mirrors"]["links"][0].as<std::string>(), "l1-" + spine);
    EXPECT_EQ(c["remote"]["session"].as<int>(), static_cast<int>(s + 1));
    EXPECT_EQ(c["remote"]["source"].as<std::string>(), t.find(spine)->mgmt_address);
    EXPECT_EQ(c["remote"].size(), 2u);  // session and source, nothing else
  }
  // A local mirror's capture points have no remote key.
  o.mirror_mode = MirrorMode::local;
  const Topology local = build_topology(o, 4);
  EXPECT_FALSE(YAML::Load(inventory_yaml(local, o, TestbedPaths{o.dir}))["captures"][0]["remote"]);
}

TEST(InventoryFile, ARemoteMirrorLoadsWithTheInventoryLoader) {
  TestbedOptions o = five_hosts();
  o.mirror_mode = MirrorMode::gre;
  const Topology t = build_topology(o, 4);
  const auto loaded =
      inventory::parse_inventory(inventory_yaml(t, o, TestbedPaths{o.dir}), "tb.yaml");
  for (const auto& d : loaded.diagnostics) ADD_FAILURE() << inventory::to_string(d);
  ASSERT_TRUE(loaded.inventory.has_value());
  ASSERT_EQ(loaded.inventory->captures.size(), 3u);
  for (std::size_t s = 0; s < 3; ++s) {
    const inventory::CapturePoint& c = loaded.inventory->captures[s];
    EXPECT_EQ(c.interface, "t1-mgmt");
    EXPECT_EQ(c.mirrors.switch_name, "s" + std::to_string(s + 1));
    ASSERT_TRUE(c.remote.has_value());
    EXPECT_EQ(c.remote->session, s + 1);
    EXPECT_EQ(c.remote->source, t.find(c.mirrors.switch_name)->mgmt_address);
  }
}

TEST(InventoryFile, SpeedsAreWrittenAsStated) {
  TestbedOptions o;
  o.dir = "/srv/tb";
  o.id = "t1";
  o.uplink_mbps = 400;
  const Topology t = build_topology(o, 4);
  const std::string text = inventory_yaml(t, o, TestbedPaths{o.dir});
  EXPECT_NE(text.find("gbps: 0.4}"), std::string::npos) << text;
  EXPECT_EQ(text.find("0.40000"), std::string::npos);
}

}  // namespace
}  // namespace rocehil::testbed
