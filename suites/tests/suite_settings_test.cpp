// A suite's `settings:`: fabric settings by the catalogue's names, read with where they were given,
// and refused at their line when a name or value is wrong.
#include <gtest/gtest.h>

#include "rocehil/suites/suite.hpp"

namespace rocehil::suites {
namespace {

constexpr std::string_view tests = "tests:\n  - name: a\n    workload: allreduce\n";

SuiteLoadResult load(std::string_view settings) {
  return parse_suite(
      std::string("schema_version: 1\nname: x\n") + std::string(settings) + std::string(tests),
      "s.yaml");
}

std::vector<std::string> errors_of_settings(std::string_view settings) {
  const SuiteLoadResult r = load(settings);
  EXPECT_FALSE(r.suite.has_value());
  std::vector<std::string> out;
  for (const auto& d : r.diagnostics) out.push_back(inventory::to_string(d));
  return out;
}

TEST(SuiteSettings, AreReadInTheCataloguesSpellingWithWhereTheyWereGiven) {
  const SuiteLoadResult r = load(
      "settings:\n  roce_rp.rpg_time_reset: 55\n  roce_np.enable: [4, 3]\n  trust: DSCP\n"
      "  switch.ecn_mark_mbps: 150\n");
  ASSERT_TRUE(r.suite.has_value())
      << (r.diagnostics.empty() ? std::string() : inventory::to_string(r.diagnostics.front()));
  const auto& s = r.suite->settings;
  ASSERT_EQ(s.size(), 4u);
  EXPECT_EQ(s[0].setting->name, "roce_rp.rpg_time_reset");
  EXPECT_EQ(s[0].value, "55");
  EXPECT_EQ(s[0].origin, "s.yaml:4:3");
  EXPECT_EQ(s[1].value, "3,4");
  EXPECT_EQ(s[2].value, "dscp");
  EXPECT_EQ(s[3].setting->scope, settings::Scope::fabric_link);
}

TEST(SuiteSettings, NoSettingsIsNone) {
  const SuiteLoadResult r = load("");
  ASSERT_TRUE(r.suite.has_value());
  EXPECT_TRUE(r.suite->settings.empty());
}

TEST(SuiteSettings, WrongNamesAndValuesAreRefusedAtTheirLine) {
  EXPECT_EQ(errors_of_settings("settings:\n  roce_rp.rpg_time_rest: 55\n  roce_rp.rpg_gd: 16\n"),
            (std::vector<std::string>{
                "s.yaml:4:3: settings: unknown setting 'roce_rp.rpg_time_rest' (did you mean "
                "'roce_rp.rpg_time_reset'?)",
                "s.yaml:5:3: settings: roce_rp.rpg_gd: '16' is not a value it takes; it takes "
                "0..15 (log2)"}));
  const auto not_a_map = errors_of_settings("settings: [1, 2]\n");
  ASSERT_EQ(not_a_map.size(), 1u);
  EXPECT_NE(not_a_map[0].find("settings must be a map"), std::string::npos) << not_a_map[0];
  const auto no_value = errors_of_settings("settings:\n  mtu: {a: 1}\n");
  ASSERT_EQ(no_value.size(), 1u);
  EXPECT_NE(no_value[0].find("needs a value"), std::string::npos) << no_value[0];
}

TEST(SuiteSettings, ATestHasItsOwnReadAndRefusedAsTheSuitesAre) {
  const SuiteLoadResult r = parse_suite(
      "schema_version: 1\nname: x\ntests:\n  - name: off\n    workload: incast\n"
      "    settings: {roce_rp.enable: none, roce_np.enable: none}\n"
      "  - name: on\n    workload: incast\n",
      "s.yaml");
  ASSERT_TRUE(r.suite.has_value())
      << (r.diagnostics.empty() ? std::string() : inventory::to_string(r.diagnostics.front()));
  const auto& off = r.suite->tests[0].fabric_settings;
  ASSERT_EQ(off.size(), 2u);
  EXPECT_EQ(off[0].setting->name, "roce_rp.enable");
  EXPECT_EQ(off[0].origin, "s.yaml:6:16");
  EXPECT_TRUE(r.suite->tests[1].fabric_settings.empty());
  EXPECT_TRUE(r.suite->settings.empty());

  const SuiteLoadResult bad = parse_suite(
      "schema_version: 1\nname: x\ntests:\n  - name: off\n    workload: incast\n"
      "    settings:\n      roce_rp.rpg_time_rest: 55\n",
      "s.yaml");
  ASSERT_EQ(bad.diagnostics.size(), 1u);
  EXPECT_EQ(inventory::to_string(bad.diagnostics[0]),
            "s.yaml:7:7: test 'off': settings: unknown setting 'roce_rp.rpg_time_rest' (did you "
            "mean 'roce_rp.rpg_time_reset'?)");
  // `defaults:` holds what every test starts from, not fabric settings (the suite's are those).
  const SuiteLoadResult in_defaults = parse_suite(
      "schema_version: 1\nname: x\ndefaults: {settings: {mtu: 1024}}\ntests:\n  - name: a\n"
      "    workload: incast\n",
      "s.yaml");
  EXPECT_EQ(in_defaults.diagnostics.size(), 1u);
}

}  // namespace
}  // namespace rocehil::suites
