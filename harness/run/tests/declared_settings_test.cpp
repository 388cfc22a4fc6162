// The inventory's declared settings against the values read on the fabric: what `inventory
// check` lists as differing, and where each declared value came from.
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "rocehil/run/fabric_settings.hpp"

namespace rocehil::run {
namespace {

inventory::Nic nic(const std::string& netdev, const std::string& ip) {
  inventory::Nic n;
  n.netdev = netdev;
  n.ip = ip;
  return n;
}

inventory::Host host(const std::string& name, std::vector<inventory::Nic> nics,
                     const std::vector<std::pair<std::string, std::string>>& declared) {
  inventory::Host h;
  h.name = name;
  h.address = name;
  h.nics = std::move(nics);
  for (const auto& [setting, value] : declared)
    h.settings.push_back(settings::assign(setting, value, "inv.yaml:9:5"));
  return h;
}

std::vector<SettingsHost> settings_hosts(const std::vector<inventory::Host>& hosts) {
  std::vector<SettingsHost> out;
  for (const auto& h : hosts) out.push_back({&h, "verbs"});
  return out;
}

// One line per difference, every field, so that a failure shows the whole list.
std::vector<std::string> lines(const std::vector<SettingDifference>& diffs) {
  std::vector<std::string> out;
  for (const auto& d : diffs)
    out.push_back("host=" + d.host + " netdev=" + d.netdev + " " + d.name + " declared=" +
                  d.declared + " at " + d.origin + " in_force=" + d.in_force.value_or("(absent)"));
  return out;
}

TEST(DeclaredSettings, AValueThatIsInForceIsNoDifference) {
  const std::vector<inventory::Host> hosts = {
      host("h1", {nic("eth1", "10.0.0.1")}, {{"roce_rp.rpg_time_reset", "55"}, {"trust", "DSCP"}})};
  const std::vector<SettingInForce> in_force = {{"h1", "eth1", "roce_rp.rpg_time_reset", "55"},
                                                {"h1", "eth1", "trust", "dscp"}};
  EXPECT_EQ(lines(declared_differences(settings_hosts(hosts), in_force)),
            std::vector<std::string>{});
}

TEST(DeclaredSettings, ADifferentValueIsOneDifferenceWithEverythingToFindIt) {
  const std::vector<inventory::Host> hosts = {
      host("h1", {nic("eth1", "10.0.0.1")}, {{"roce_rp.rpg_time_reset", "55"}})};
  const auto diffs = declared_differences(settings_hosts(hosts),
                                          {{"h1", "eth1", "roce_rp.rpg_time_reset", "300"}});
  ASSERT_EQ(diffs.size(), 1u);
  EXPECT_EQ(diffs[0].host, "h1");
  EXPECT_EQ(diffs[0].netdev, "eth1");
  EXPECT_EQ(diffs[0].name, "roce_rp.rpg_time_reset");
  EXPECT_EQ(diffs[0].declared, "55");
  EXPECT_EQ(diffs[0].origin, "inv.yaml:9:5");
  EXPECT_EQ(diffs[0].in_force, "300");
}

TEST(DeclaredSettings, OnlyTheNicThatDiffersIsNamed) {
  const std::vector<inventory::Host> hosts = {
      host("h1", {nic("eth1", "10.0.0.1"), nic("eth2", "10.0.1.1")}, {{"pfc", "3"}})};
  const std::vector<SettingInForce> in_force = {{"h1", "eth1", "pfc", "3"},
                                                {"h1", "eth2", "pfc", "none"}};
  EXPECT_EQ(lines(declared_differences(settings_hosts(hosts), in_force)),
            (std::vector<std::string>{
                "host=h1 netdev=eth2 pfc declared=3 at inv.yaml:9:5 in_force=none"}));
}

// Read back from none of the host's NICs (a driver without the file): declared but not in
// force, on no netdev in particular.
TEST(DeclaredSettings, ADeclaredSettingNotReadIsAbsentOnNoNetdev) {
  const std::vector<inventory::Host> hosts = {
      host("h1", {nic("eth1", "10.0.0.1")}, {{"roce_np.cnp_dscp", "26"}})};
  const auto diffs =
      declared_differences(settings_hosts(hosts), {{"h2", "eth1", "roce_np.cnp_dscp", "26"}});
  ASSERT_EQ(diffs.size(), 1u);
  EXPECT_EQ(diffs[0].host, "h1");
  EXPECT_EQ(diffs[0].netdev, "");
  EXPECT_EQ(diffs[0].name, "roce_np.cnp_dscp");
  EXPECT_EQ(diffs[0].declared, "26");
  EXPECT_EQ(diffs[0].in_force, std::nullopt);
}

// A capture host has no RoCE address: nothing is read on it, so nothing is missing there.
TEST(DeclaredSettings, AHostWithoutANicAddressIsSkipped) {
  const std::vector<inventory::Host> hosts = {
      host("cap1", {nic("eth9", "")}, {{"roce_rp.rpg_time_reset", "55"}}),
      host("h1", {nic("eth1", "10.0.0.1")}, {{"roce_rp.rpg_time_reset", "55"}})};
  EXPECT_EQ(lines(declared_differences(settings_hosts(hosts),
                                       {{"h1", "eth1", "roce_rp.rpg_time_reset", "300"}})),
            (std::vector<std::string>{"host=h1 netdev=eth1 roce_rp.rpg_time_reset declared=55 "
                                      "at inv.yaml:9:5 in_force=300"}));
}

// defaults: settings gives a switch setting to every host; the switches are one, so the
// setting is compared (and reported) once, against the entry with no host.
TEST(DeclaredSettings, ASwitchSettingOnEveryHostIsComparedOnceAgainstTheSwitches) {
  const std::vector<inventory::Host> hosts = {
      host("h1", {nic("eth1", "10.0.0.1")}, {{"switch.ecn_mark_mbps", "150"}}),
      host("h2", {nic("eth1", "10.0.0.2")}, {{"switch.ecn_mark_mbps", "150"}}),
      host("cap1", {}, {{"switch.ecn_mark_mbps", "150"}})};
  ASSERT_EQ(hosts[0].settings[0].setting->scope, settings::Scope::fabric_link);
  EXPECT_EQ(
      lines(declared_differences(settings_hosts(hosts), {{"", "", "switch.ecn_mark_mbps", "300"}})),
      (std::vector<std::string>{
          "host= netdev= switch.ecn_mark_mbps declared=150 at inv.yaml:9:5 in_force=300"}));
  EXPECT_EQ(
      lines(declared_differences(settings_hosts(hosts), {{"", "", "switch.ecn_mark_mbps", "150"}})),
      std::vector<std::string>{});
  // A value read on a host under the switch setting's name is not the switches'.
  EXPECT_EQ(lines(declared_differences(settings_hosts(hosts),
                                       {{"h1", "eth1", "switch.ecn_mark_mbps", "150"}})),
            (std::vector<std::string>{"host= netdev= switch.ecn_mark_mbps declared=150 at "
                                      "inv.yaml:9:5 in_force=(absent)"}));
}

// Journals are kept per fabric: the inventory's name, else its file's path, so two testbeds (or
// two inventories without names) never share a journal directory.
TEST(FabricId, TheInventorysNameElseItsPath) {
  inventory::Inventory a;
  a.name = "testbed-tb1";
  a.file = "/tmp/tb1/inventory.yaml";
  EXPECT_EQ(fabric_id(a), "testbed-tb1");
  a.name = "../lab fabric";
  EXPECT_EQ(fabric_id(a), "_.-lab-fabric") << "no directory outside the journals'";
  inventory::Inventory b;
  b.file = "/tmp/tb1/inventory.yaml";
  inventory::Inventory c;
  c.file = "/tmp/tb1/../tb1/inventory.yaml";
  inventory::Inventory d;
  d.file = "/tmp/tb2/inventory.yaml";
  EXPECT_EQ(fabric_id(b).rfind("inventory-", 0), 0u) << fabric_id(b);
  EXPECT_EQ(fabric_id(b).size(), std::string("inventory-").size() + 16);
  EXPECT_EQ(fabric_id(b), fabric_id(c));
  EXPECT_NE(fabric_id(b), fabric_id(d));
}

}  // namespace
}  // namespace rocehil::run
