// The catalogue: every setting well formed, names that are the files a real ConnectX host has,
// values checked and written one way, unknown names answered with the nearest one.

#include "rocehil/settings/catalogue.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "rocehil/common/error.hpp"
#include "rocehil/settings/assignment.hpp"

namespace rocehil::settings {
namespace {

std::string file_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(Catalogue, EverySettingIsWellFormedAndItsDefaultIsAValueItTakes) {
  std::set<std::string_view> names;
  for (const Setting& s : catalogue()) {
    SCOPED_TRACE(std::string(s.name));
    EXPECT_TRUE(names.insert(s.name).second) << "named twice";
    EXPECT_FALSE(s.what.empty());
    if (!s.default_.empty()) {
      EXPECT_EQ(canonical_value(s, s.default_), std::string(s.default_));
    }
    if (s.kind == ValueKind::number) {
      EXPECT_LE(s.min, s.max);
    }
    if (s.scope == Scope::nic) {
      EXPECT_TRUE(!s.sysfs.empty() || !s.debugfs.empty() || !s.tool.empty())
          << "no way to read or write it";
    }
    EXPECT_EQ(find(s.name), &s);
  }
  EXPECT_EQ(find("roce_rp.no_such"), nullptr);
}

// The files and debugfs names are those of the preflight probe's ConnectX host sample
// (harness/preflight/tests/data/probe/connectx_host.txt: MLNX_OFED's sysfs ecn/ on one port, the
// upstream driver's cc_params on the other); the same names are the fields of the firmware's
// congestion-control layout (include/linux/mlx5/mlx5_ifc.h, cong_control_r_roce_ecn_rp/np).
TEST(Catalogue, NamesAreTheFilesARealConnectXHostHas) {
  const std::string probe = file_text(std::string(ROCEHIL_PROBE_DATA) + "/connectx_host.txt");
  ASSERT_FALSE(probe.empty());
  int sysfs = 0, debugfs = 0;
  for (const Setting& s : catalogue()) {
    if (s.kind != ValueKind::number || s.scope != Scope::nic || s.sysfs.rfind("ecn/", 0) != 0)
      continue;
    SCOPED_TRACE(std::string(s.name));
    EXPECT_NE(probe.find("param " + std::string(s.sysfs.substr(4)) + " "), std::string::npos);
    ++sysfs;
    if (!s.debugfs.empty()) {
      EXPECT_NE(probe.find("\n" + std::string(s.debugfs) + " "), std::string::npos);
      ++debugfs;
    }
    // The name says where it lives: roce_rp.X is ecn/roce_rp/X.
    EXPECT_EQ("ecn/" + std::string(s.name).replace(7, 1, "/"), s.sysfs);
  }
  EXPECT_GE(sysfs, 18);
  EXPECT_GE(debugfs, 18);
}

// docs/settings.md has a row for every setting, with its default and soft column as the table says.
TEST(Catalogue, TheDocsListEverySetting) {
  const std::string docs = file_text(std::string(ROCEHIL_DOCS) + "/settings.md");
  ASSERT_FALSE(docs.empty());
  for (const Setting& s : catalogue()) {
    SCOPED_TRACE(std::string(s.name));
    const std::size_t row = docs.find("| `" + std::string(s.name) + "` |");
    ASSERT_NE(row, std::string::npos);
    const std::string line = docs.substr(row, docs.find('\n', row) - row);
    const std::string shown_default = s.default_.empty() ? "-" : std::string(s.default_);
    const std::string soft = s.scope != Scope::nic ? "-" : s.soft ? "yes" : "no";
    EXPECT_NE(line.find(" | " + shown_default + " | " + soft + " | "), std::string::npos) << line;
  }
}

TEST(Catalogue, ValuesAreCheckedAndWrittenOneWay) {
  const Setting& gd = *find("roce_rp.rpg_gd");
  EXPECT_EQ(canonical_value(gd, " 11 "), "11");
  EXPECT_EQ(canonical_value(gd, "0"), "0");
  for (const char* bad : {"16", "-1", "11x", "", "0x0b", "1e1"}) {
    SCOPED_TRACE(bad);
    try {
      canonical_value(gd, bad);
      ADD_FAILURE() << "taken";
    } catch (const Error& e) {
      EXPECT_EQ(e.exit_code(), ExitCode::bad_input);
      EXPECT_NE(std::string(e.what()).find("roce_rp.rpg_gd: '"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("0..15 (log2)"), std::string::npos) << e.what();
    }
  }
  const Setting& enable = *find("roce_np.enable");
  EXPECT_EQ(canonical_value(enable, "4, 3"), "3,4");
  EXPECT_EQ(canonical_value(enable, "3,3"), "3");
  EXPECT_EQ(canonical_value(enable, "NONE"), "none");
  for (const char* bad : {"8", "3,", "", "34", "a"})
    EXPECT_THROW(canonical_value(enable, bad), Error);
  const Setting& trust = *find("trust");
  EXPECT_EQ(canonical_value(trust, "DSCP"), "dscp");
  EXPECT_THROW(canonical_value(trust, "both"), Error);
  EXPECT_EQ(valid_values(trust), "dscp/pcp");
  EXPECT_EQ(valid_values(*find("mtu")), "1280..9978 (bytes)");
}

// The lossless switches' knobs: fabric_link settings of the testbed, each with its range, unit
// and default (SwitchKnobs' in testbed/options.hpp; cli_tests hold the two against each other).
TEST(Catalogue, TheLosslessSwitchesKnobsAreFabricLinkSettings) {
  const std::vector<std::pair<std::string, std::string>> knobs = {
      {"switch.ecn_enable", "1"},
      {"switch.pfc_priorities", "3,4"},
      {"switch.wred_kmin_kb", "50"},
      {"switch.wred_kmax_kb", "200"},
      {"switch.wred_pmax_percent", "20"},
      {"switch.xoff_kb", "250"},
      {"switch.dscp_to_tc", "default"},
      {"switch.pfc_watchdog_detection_ms", "200"},
      {"switch.pfc_watchdog_restoration_ms", "200"}};
  for (const auto& [name, default_] : knobs) {
    SCOPED_TRACE(name);
    const Setting* s = find(name);
    ASSERT_NE(s, nullptr);
    EXPECT_EQ(s->scope, Scope::fabric_link);
    EXPECT_EQ(s->default_, default_);
    EXPECT_NE(s->tool.find("--lossless"), std::string_view::npos);
  }
  EXPECT_EQ(valid_values(*find("switch.xoff_kb")), "10..1000000 (KB)");
  EXPECT_EQ(valid_values(*find("switch.wred_pmax_percent")), "0..100 (%)");
  EXPECT_EQ(valid_values(*find("switch.pfc_watchdog_detection_ms")), "0..60000 (ms)");
  EXPECT_EQ(valid_values(*find("switch.ecn_enable")), "0..1");
  EXPECT_EQ(canonical_value(*find("switch.pfc_priorities"), "none"), "none");
  EXPECT_THROW(canonical_value(*find("switch.ecn_enable"), "2"), Error);
  EXPECT_THROW(canonical_value(*find("switch.xoff_kb"), "9"), Error);
  // A suite's `set:` and bisect's candidates take them as --set does.
  const Assignment a = assign("switch.xoff_kb", "300", "suite.yaml:4:5");
  EXPECT_EQ(a.value, "300");
  EXPECT_EQ(a.setting->scope, Scope::fabric_link);
}

TEST(Catalogue, DscpPairsAreWrittenSortedAndEachDscpOnce) {
  const Setting& map = *find("switch.dscp_to_tc");
  EXPECT_EQ(map.kind, ValueKind::dscp_map);
  EXPECT_EQ(canonical_value(map, "46:5, 3:3"), "3:3,46:5");
  EXPECT_EQ(canonical_value(map, "26:3"), "26:3");
  EXPECT_EQ(canonical_value(map, "Default"), "default");
  EXPECT_EQ(canonical_value(map, ""), "default");
  for (const char* bad : {"3:3,3:4", "64:3", "3:8", "3-3", "3:", ":3", "3:3,", "a:b", "-1:0"}) {
    SCOPED_TRACE(bad);
    try {
      canonical_value(map, bad);
      ADD_FAILURE() << "taken";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("switch.dscp_to_tc: '"), std::string::npos);
      EXPECT_NE(std::string(e.what()).find("DSCP:CLASS pairs"), std::string::npos) << e.what();
    }
  }
}

TEST(Assignment, UnknownKeysGetTheNearestNameAndBadValuesTheirRange) {
  const Assignment a = parse_assignment("roce_rp.rpg_time_reset=600");
  EXPECT_EQ(a.setting, find("roce_rp.rpg_time_reset"));
  EXPECT_EQ(a.value, "600");
  EXPECT_EQ(a.origin, "--set");
  try {
    parse_assignment("roce_rp.rpg_time_rest=600");
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(),
                 "--set: unknown setting 'roce_rp.rpg_time_rest' (did you mean "
                 "'roce_rp.rpg_time_reset'?)");
  }
  try {
    parse_assignment("switch.ecn_mark=200");  // cut short: too many edits, plainly meant
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(),
                 "--set: unknown setting 'switch.ecn_mark' (did you mean "
                 "'switch.ecn_mark_mbps'?)");
  }
  try {
    assign("roce_np.cnp_dscp", "64", "suite.yaml:7:5");
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(),
                 "suite.yaml:7:5: roce_np.cnp_dscp: '64' is not a value it takes; it "
                 "takes 0..63");
  }
  EXPECT_THROW(parse_assignment("mtu"), Error);
  EXPECT_THROW(parse_assignment("=9000"), Error);
  try {
    parse_assignment("zzzzzz=1");
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'rocehil settings list' shows them"), std::string::npos);
  }
}

TEST(Assignment, TheCommandLineOverridesASuiteAndAKeyTwiceInOneListIsAnError) {
  const std::vector<Assignment> suite = {assign("mtu", "9000", "s.yaml:3:3"),
                                         assign("trust", "dscp", "s.yaml:4:3")};
  const std::vector<Assignment> merged = merge(suite, {parse_assignment("mtu=4200")});
  ASSERT_EQ(merged.size(), 2u);
  EXPECT_EQ(merged[0].value, "4200");
  EXPECT_EQ(merged[0].origin, "--set");
  EXPECT_EQ(merged[1].value, "dscp");
  try {
    merge({}, {parse_assignment("mtu=9000"), parse_assignment("mtu=4200")});
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "--set: mtu is given again (first at --set); give it once");
  }
}

}  // namespace
}  // namespace rocehil::settings
