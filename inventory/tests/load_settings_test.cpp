// An inventory's `settings:` (under defaults and on a host): the fabric settings each host is
// declared to run with, read with the catalogue's names and values and placed in the file.
#include <gtest/gtest.h>

#include "inventory_text.hpp"

#include "rocehil/inventory/load.hpp"

namespace rocehil::inventory {
namespace {

using testing::load_ok;
using testing::messages;

// name=value@origin, so that a whole list is compared at once and a failure shows all of it.
std::vector<std::string> listed(const std::vector<settings::Assignment>& list) {
  std::vector<std::string> out;
  for (const auto& a : list)
    out.push_back(std::string(a.setting->name) + "=" + a.value + "@" + a.origin);
  return out;
}

constexpr const char* declared = R"(schema_version: 1
defaults:
  settings:
    roce_rp.rpg_time_reset: 55
    trust: DSCP
hosts:
  - name: h1
  - name: h2
    settings:
      roce_rp.rpg_time_reset: 300
      pfc: [4, 3]
  - name: h[3-4]
)";

TEST(LoadSettings, DefaultsSettingsReachEveryHostWithTheirPlaceInTheFile) {
  const Inventory inv = load_ok(declared);
  EXPECT_EQ(
      listed(inv.defaults.settings),
      (std::vector<std::string>{"roce_rp.rpg_time_reset=55@f.yaml:4:5", "trust=dscp@f.yaml:5:5"}));
  ASSERT_EQ(inv.hosts.size(), 4u);
  for (const std::size_t i : {0u, 2u, 3u})
    EXPECT_EQ(listed(inv.hosts[i].settings), listed(inv.defaults.settings)) << inv.hosts[i].name;
}

TEST(LoadSettings, AHostsOwnValueOverridesTheDefaultForThatNameOnly) {
  const Inventory inv = load_ok(declared);
  ASSERT_EQ(inv.hosts.size(), 4u);
  ASSERT_EQ(inv.hosts[1].name, "h2");
  // The override keeps the default's place in the list but takes the host's value and origin;
  // trust, not given on h2, stays the default's.
  EXPECT_EQ(listed(inv.hosts[1].settings),
            (std::vector<std::string>{"roce_rp.rpg_time_reset=300@f.yaml:10:7",
                                      "trust=dscp@f.yaml:5:5", "pfc=3,4@f.yaml:11:7"}));
}

// Values are kept canonical, the one way run.json and read-backs write them, so that a declared
// value compares equal to the same value read from a NIC.
TEST(LoadSettings, ValuesAreCanonical) {
  const Inventory inv = load_ok(declared);
  ASSERT_EQ(inv.hosts.size(), 4u);
  const auto& h2 = inv.hosts[1].settings;
  ASSERT_EQ(h2.size(), 3u);
  EXPECT_EQ(h2[2].setting->name, "pfc");
  EXPECT_EQ(h2[2].value, "3,4");  // a YAML list [4, 3], sorted
  EXPECT_EQ(h2[1].setting->name, "trust");
  EXPECT_EQ(h2[1].value, "dscp");  // DSCP, lower-cased
}

TEST(LoadSettings, AnEmptyPriorityListIsNone) {
  const Inventory inv = load_ok(
      "schema_version: 1\ndefaults: {settings: {pfc: []}}\n"
      "hosts: [{name: h1}]\n");
  ASSERT_EQ(inv.hosts[0].settings.size(), 1u);
  EXPECT_EQ(inv.hosts[0].settings[0].value, "none");
}

TEST(LoadSettings, AnUnknownNameIsReportedWhereItIsWithTheNearestName) {
  const auto bad = messages(R"(schema_version: 1
defaults:
  settings:
    roce_rp.rpg_time_rest: 55
    colour: blue
hosts: [{name: h1}]
)");
  ASSERT_EQ(bad.size(), 2u);
  EXPECT_EQ(bad[0],
            "f.yaml:4:5: defaults: settings: unknown setting 'roce_rp.rpg_time_rest' (did you "
            "mean 'roce_rp.rpg_time_reset'?)");
  // Nothing within three edits: no guess, the command that lists them.
  EXPECT_EQ(bad[1],
            "f.yaml:5:5: defaults: settings: unknown setting 'colour' ('rocehil settings list' "
            "shows them)");
}

TEST(LoadSettings, AValueOutOfRangeIsReportedOnItsHostWithTheValuesTaken) {
  const auto bad = messages(R"(schema_version: 1
hosts:
  - name: h1
    settings:
      roce_rp.rpg_gd: 16
      trust: vlan
)");
  ASSERT_EQ(bad.size(), 2u);
  EXPECT_EQ(bad[0],
            "f.yaml:5:7: host 'h1': settings: roce_rp.rpg_gd: '16' is not a value it takes; it "
            "takes 0..15 (log2)");
  EXPECT_EQ(bad[1],
            "f.yaml:6:7: host 'h1': settings: trust: 'vlan' is not a value it takes; it takes "
            "dscp/pcp");
}

TEST(LoadSettings, SettingsThatAreNotAMapAreAnError) {
  const auto bad = messages(R"(schema_version: 1
defaults:
  settings: [roce_rp.rpg_gd, 11]
hosts: [{name: h1}]
)");
  ASSERT_EQ(bad.size(), 1u);
  EXPECT_EQ(bad[0],
            "f.yaml:3:13: defaults: settings must be a map of setting: value, such as "
            "'roce_rp.rpg_time_reset: 55' ('rocehil settings list' shows them)");
}

TEST(LoadSettings, AValueThatIsAMapIsAnErrorAtTheValue) {
  const auto bad = messages(R"(schema_version: 1
hosts:
  - name: h[1-2]
    settings:
      roce_rp.rpg_gd: {value: 11}
)");
  ASSERT_EQ(bad.size(), 1u);  // once for the entry, not once per host
  EXPECT_EQ(bad[0],
            "f.yaml:5:23: host entry 'h[1-2]': settings: roce_rp.rpg_gd needs a value, such as "
            "roce_rp.rpg_gd: 55");
}

}  // namespace
}  // namespace rocehil::inventory
