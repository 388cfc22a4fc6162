// What a run set on the fabric (run.json's settings.in_force) among the settings two runs are
// compared by, so that compare and bisect name a changed DCQCN parameter or switch rate.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "rocehil/reports/settings.hpp"

namespace rocehil::reports {
namespace {

RunRecord run_with_in_force(const char* in_force) {
  RunRecord run;
  run.rocehil_version = "0.1.0";
  run.suite_text = "name: smoke";
  run.inventory_text = "hosts: {}";
  run.fabric_settings = {{"asked", nlohmann::json::array()},
                         {"in_force", nlohmann::json::parse(in_force)},
                         {"changes", nlohmann::json::array()}};
  return run;
}

std::vector<std::string> set_keys(const Settings& s) {
  std::vector<std::string> out;
  for (const auto& [name, value] : s)
    if (name.starts_with("set ")) out.push_back(name + "=" + value);
  return out;
}

std::string replaced(std::string text, std::string_view from, std::string_view to) {
  const std::size_t at = text.find(from);
  if (at == std::string::npos) throw std::logic_error("not in the text: " + std::string(from));
  return text.replace(at, from.size(), to);
}

constexpr const char* before = R"([
  {"host": "h1", "netdev": "eth1", "name": "roce_rp.rpg_time_reset", "value": "300"},
  {"host": "h1", "netdev": "eth2", "name": "roce_rp.rpg_time_reset", "value": "300"},
  {"host": "h2", "netdev": "eth1", "name": "roce_rp.rpg_time_reset", "value": "300"},
  {"host": "", "netdev": "", "name": "switch.ecn_mark_mbps", "value": "300"},
  {"host": "", "netdev": "", "name": "switch.host_mbps", "value": "1000"}])";

TEST(FabricSettingsOf, EachValueInForceIsASettingNamedByHostAndNetdevOrSwitches) {
  EXPECT_EQ(set_keys(settings_of(run_with_in_force(before))),
            (std::vector<std::string>{
                "set h1 eth1 roce_rp.rpg_time_reset=300", "set h1 eth2 roce_rp.rpg_time_reset=300",
                "set h2 eth1 roce_rp.rpg_time_reset=300", "set switches switch.ecn_mark_mbps=300",
                "set switches switch.host_mbps=1000"}));
}

TEST(FabricSettingsOf, ADiffNamesTheOneHostsValueAndTheSwitchValueThatChanged) {
  // h1 eth2's value and the marking rate; h1 eth1 and h2 keep 300.
  std::string after =
      replaced(before, R"("eth2", "name": "roce_rp.rpg_time_reset", "value": "300")",
               R"("eth2", "name": "roce_rp.rpg_time_reset", "value": "55")");
  after = replaced(after, R"("switch.ecn_mark_mbps", "value": "300")",
                   R"("switch.ecn_mark_mbps", "value": "150")");
  const auto diff = settings_diff(settings_of(run_with_in_force(before)),
                                  settings_of(run_with_in_force(after.c_str())));
  ASSERT_EQ(diff.size(), 2u);
  EXPECT_EQ(diff[0].name, "set h1 eth2 roce_rp.rpg_time_reset");
  EXPECT_EQ(diff[0].before, "300");
  EXPECT_EQ(diff[0].after, "55");
  EXPECT_EQ(diff[1].name, "set switches switch.ecn_mark_mbps");
  EXPECT_EQ(diff[1].before, "300");
  EXPECT_EQ(diff[1].after, "150");
}

// A run that set nothing (or a run.json from before settings) is compared on the rest alone.
TEST(FabricSettingsOf, ARunThatSetNothingAddsNoSetKeys) {
  RunRecord run = run_with_in_force("[]");
  run.fabric_settings = nullptr;
  const Settings s = settings_of(run);
  EXPECT_EQ(set_keys(s), std::vector<std::string>{});
  EXPECT_EQ(s.size(), 3u);  // rocehil version, suite file, inventory file
  EXPECT_EQ(set_keys(settings_of(run_with_in_force("[]"))), std::vector<std::string>{});
}

// run.json may be edited by hand or come from another version: an entry that is not four strings
// is left out, and the rest of the comparison still made.
TEST(FabricSettingsOf, MalformedEntriesAreSkippedNotThrown) {
  Settings s;
  ASSERT_NO_THROW(s = settings_of(run_with_in_force(R"([
    {"host": "h1", "netdev": "eth1", "name": "roce_rp.rpg_gd", "value": 11},
    {"host": "h1", "netdev": "eth1", "name": "roce_rp.rpg_ai_rate"},
    {"netdev": "eth1", "name": "roce_rp.rpg_hai_rate", "value": "50"},
    {"host": "h1", "netdev": null, "name": "mtu", "value": "9000"},
    "set h1 eth1 pfc",
    7,
    {"host": "h1", "netdev": "eth1", "name": "trust", "value": "dscp"}])")));
  EXPECT_EQ(set_keys(s), (std::vector<std::string>{"set h1 eth1 trust=dscp"}));

  // in_force that is not a list at all reads as nothing set.
  RunRecord run = run_with_in_force("[]");
  run.fabric_settings["in_force"] = {{"host", "h1"}};
  ASSERT_NO_THROW(s = settings_of(run));
  EXPECT_EQ(set_keys(s), std::vector<std::string>{});
}

}  // namespace
}  // namespace rocehil::reports
