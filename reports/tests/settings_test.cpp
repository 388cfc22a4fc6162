#include "rocehil/reports/settings.hpp"

#include <gtest/gtest.h>

namespace rocehil::reports {
namespace {

RunRecord run_with_facts(const char* facts) {
  RunRecord run;
  run.rocehil_version = "0.1.0";
  run.suite_text = "name: smoke";
  run.inventory_text = "hosts: {}";
  run.preflight = {{"hosts", nlohmann::json::array(
                                 {{{"name", "h1"}, {"facts", nlohmann::json::parse(facts)}}})}};
  return run;
}

TEST(Settings, FirmwareDcqcnAndPfcOfEachNicAreNamedByHostAndDevice) {
  const Settings s = settings_of(run_with_facts(R"({
      "kernel": "6.1.0-18-amd64", "agent_version": "rocehil 0.1.0",
      "rdma": [{"name": "mlx5_0", "fw_ver": "28.39.1002"}],
      "netdevs": [{"name": "eth1", "mtu": 4200, "speed_mbps": 400000, "driver": "mlx5_core",
                   "ecn_np": [3], "ecn_rp": [3, 4], "pfc": [], "trust": "dscp",
                   "firmware": ""}]})"));
  EXPECT_EQ(s.at("h1 kernel"), "6.1.0-18-amd64");
  EXPECT_EQ(s.at("h1 mlx5_0 firmware"), "28.39.1002");
  EXPECT_EQ(s.at("h1 eth1 mtu"), "4200");
  EXPECT_EQ(s.at("h1 eth1 ecn_rp"), "3,4");
  EXPECT_EQ(s.at("h1 eth1 pfc"), "none");  // known to be off on every priority
  EXPECT_EQ(s.at("h1 eth1 trust"), "dscp");
  EXPECT_FALSE(s.contains("h1 eth1 firmware"));  // empty: not known, not a value
  EXPECT_EQ(s.at("rocehil version"), "0.1.0");
  EXPECT_EQ(s.at("suite file"), content_hash("name: smoke"));
}

// Bisecting a DCQCN change: compare names the parameter that changed, with where it was read.
TEST(Settings, EveryDcqcnParameterAndTheBuffersAreSettingsThatADiffNames) {
  const char* before = R"({"netdevs": [{"name": "eth1", "pfc_source": "mlnx_qos",
      "congestion": {"roce_rp/rpg_time_reset": "300", "roce_np/min_time_between_cnps": "4"},
      "prio_buffer": "0,0,0,1,0,0,0,0", "buffer_sizes": "130944,130944,0,0,0,0,0,0",
      "buffer_source": "mlnx_qos"}]})";
  const Settings a = settings_of(run_with_facts(before));
  EXPECT_EQ(a.at("h1 eth1 dcqcn roce_rp/rpg_time_reset"), "300");
  EXPECT_EQ(a.at("h1 eth1 dcqcn roce_np/min_time_between_cnps"), "4");
  EXPECT_EQ(a.at("h1 eth1 prio_buffer"), "0,0,0,1,0,0,0,0");
  EXPECT_EQ(a.at("h1 eth1 buffer_source"), "mlnx_qos");
  std::string after = before;
  after.replace(after.find(R"("300")"), 5, R"("150")");
  const auto diff = settings_diff(a, settings_of(run_with_facts(after.c_str())));
  ASSERT_EQ(diff.size(), 1u);
  EXPECT_EQ(diff[0].name, "h1 eth1 dcqcn roce_rp/rpg_time_reset");
  EXPECT_EQ(diff[0].before, "300");
  EXPECT_EQ(diff[0].after, "150");
}

TEST(Settings, AHostWithoutFactsAddsNothing) {
  RunRecord run = run_with_facts("null");
  const Settings s = settings_of(run);
  for (const auto& [name, value] : s) EXPECT_NE(name.rfind("h1 ", 0), 0u) << name;
}

TEST(Settings, ContentHashIsFnv1a64) {
  // The published FNV-1a test vectors.
  EXPECT_EQ(content_hash(""), "cbf29ce484222325");
  EXPECT_EQ(content_hash("a"), "af63dc4c8601ec8c");
  EXPECT_EQ(content_hash("foobar"), "85944171f73967e8");
}

TEST(Settings, TheDiffListsChangedAddedAndRemovedInNameOrder) {
  const Settings a{{"h1 eth1 pfc", "3"}, {"h1 kernel", "6.1"}, {"h2 kernel", "6.1"}};
  const Settings b{{"h1 eth1 pfc", "none"}, {"h1 kernel", "6.1"}, {"h3 kernel", "6.1"}};
  const auto d = settings_diff(a, b);
  ASSERT_EQ(d.size(), 3u);
  EXPECT_EQ(d[0].name, "h1 eth1 pfc");
  EXPECT_EQ(d[0].before, "3");
  EXPECT_EQ(d[0].after, "none");
  EXPECT_EQ(d[1].name, "h2 kernel");
  EXPECT_FALSE(d[1].after);
  EXPECT_EQ(d[2].name, "h3 kernel");
  EXPECT_FALSE(d[2].before);
  EXPECT_TRUE(settings_diff(a, a).empty());
}

}  // namespace
}  // namespace rocehil::reports
