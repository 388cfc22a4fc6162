// The settings in force on a --lossless testbed, from what its switches' forwarding processes
// were told (their configurations, written as `up` and `set` write them) and the hosts' tbf (tc's
// JSON captured from a real testbed, tests/data/fabric_settings).

#include "lifecycle/lossless_settings.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <functional>
#include <sstream>

#include "dataplane/switchds.hpp"
#include "rocehil/common/error.hpp"
#include "rocehil/testbed/fabric_settings.hpp"

namespace rocehil::testbed {
namespace {

// The captured testbed's shape (2 hosts, 2 racks, 1 spine), brought up with --lossless.
TestbedOptions lossless_testbed() {
  TestbedOptions o;
  o.dir = "/tmp/fs-tb";
  o.id = "t5dfb";
  o.hosts = 2;
  o.racks = 2;
  o.spines = 1;
  o.lossless = true;
  return o;
}

std::string captured_tc(const std::string& name) {
  const std::string path = std::string(ROCEHIL_TESTBED_DATA) + "/fabric_settings/" + name;
  std::ifstream in(path);
  EXPECT_TRUE(in) << path;
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Each switch's configuration as `up` (or `set`) writes it for `o`, and the hosts' tc output from
// capture `tc_capture` ("defaults": hosts shaped at 1000 Mb/s; "changed": unshaped).
LosslessReadings lossless_readings(const TestbedOptions& o,
                                   const std::string& tc_capture = "defaults") {
  LosslessReadings r;
  for (const auto& ns : build_topology(o, 64).namespaces) {
    if (is_switch(ns))
      r.configs[ns.netns] = dataplane::to_json_text(
          dataplane::switch_config(ns, o, "/run/rocehil/" + ns.netns + ".counters"));
    else if (!fabric_interfaces(ns).empty())
      r.tc[ns.netns] = captured_tc(tc_capture + "/" + ns.name + ".tc.json");
  }
  return r;
}

std::map<std::string, std::string> lossless_in_force(const TestbedOptions& o,
                                                     const LosslessReadings& r) {
  return lossless_settings_in_force(build_topology(o, 64), o, r);
}

std::string infrastructure_error(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), ExitCode::infrastructure) << e.what();
    return e.what();
  }
  return "no error";
}

TEST(LosslessSettings, DefaultsReadBackInTheCataloguesForm) {
  const TestbedOptions o = lossless_testbed();
  EXPECT_EQ(lossless_in_force(o, lossless_readings(o)),
            (std::map<std::string, std::string>{{"switch.uplink_mbps", "400"},
                                                {"switch.host_mbps", "1000"},
                                                {"switch.ecn_enable", "1"},
                                                {"switch.pfc_priorities", "3,4"},
                                                {"switch.wred_kmin_kb", "50"},
                                                {"switch.wred_kmax_kb", "200"},
                                                {"switch.wred_pmax_percent", "20"},
                                                {"switch.xoff_kb", "250"},
                                                {"switch.dscp_to_tc", "default"},
                                                {"switch.pfc_watchdog_detection_ms", "200"},
                                                {"switch.pfc_watchdog_restoration_ms", "200"}}));
}

TEST(LosslessSettings, WhatSetWroteIsWhatReadsBack) {
  const TestbedOptions o =
      with_switch_settings(lossless_testbed(), {{"switch.xoff_kb", "300"},
                                                {"switch.ecn_enable", "0"},
                                                {"switch.pfc_priorities", "none"},
                                                {"switch.dscp_to_tc", "46:5,3:3"},
                                                {"switch.uplink_mbps", "200"},
                                                {"switch.host_mbps", "0"}});
  const auto now = lossless_in_force(o, lossless_readings(o, "changed"));
  EXPECT_EQ(now.at("switch.xoff_kb"), "300");
  EXPECT_EQ(now.at("switch.ecn_enable"), "0");
  EXPECT_EQ(now.at("switch.pfc_priorities"), "none");
  EXPECT_EQ(now.at("switch.dscp_to_tc"), "3:3,46:5");
  EXPECT_EQ(now.at("switch.uplink_mbps"), "200");
  EXPECT_EQ(now.at("switch.host_mbps"), "0");
  EXPECT_FALSE(now.contains("switch.ecn_mark_mbps"));  // no rate rule on a lossless switch
  for (const auto& [name, value] : now) EXPECT_EQ(switch_setting_text(o, name), value) << name;
}

TEST(LosslessSettings, ASwitchThatDisagreesIsNamedWithItsFile) {
  const TestbedOptions o = lossless_testbed();
  LosslessReadings r = lossless_readings(o);
  const TestbedOptions l1 = with_switch_settings(o, {{"switch.xoff_kb", "300"}});
  const Topology t = build_topology(l1, 64);
  r.configs["rocehil-t5dfb-l1"] = dataplane::to_json_text(
      dataplane::switch_config(*t.find("l1"), l1, "/run/rocehil/x.counters"));
  const std::string e = infrastructure_error([&] { lossless_in_force(o, r); });
  EXPECT_NE(e.find("switch.xoff_kb is not the same on every switch: rocehil-t5dfb-l1 "
                   "(/tmp/fs-tb/switchd/rocehil-t5dfb-l1.json) has 300, rocehil-t5dfb-l2 "
                   "(/tmp/fs-tb/switchd/rocehil-t5dfb-l2.json) has 250 (as 2 of 3 switches do)"),
            std::string::npos)
      << e;
  EXPECT_NE(e.find("'rocehil testbed set switch.xoff_kb=VALUE --dir /tmp/fs-tb'"),
            std::string::npos)
      << e;
}

TEST(LosslessSettings, AHostTbfThatDisagreesWithTheLeafsPacingIsNamed) {
  const TestbedOptions o = lossless_testbed();
  LosslessReadings r = lossless_readings(o);
  r.tc["rocehil-t5dfb-h1"] = captured_tc("changed/h1.tc.json");  // h1's tbf gone: unshaped
  const std::string e = infrastructure_error([&] { lossless_in_force(o, r); });
  EXPECT_NE(e.find("switch.host_mbps is not the same on every port: rocehil-t5dfb-h1 t5dfb-nic0 "
                   "has 0, "),
            std::string::npos)
      << e;
}

TEST(LosslessSettings, MissingOrBrokenConfigurationsAreTheFabricsFault) {
  const TestbedOptions o = lossless_testbed();
  LosslessReadings r = lossless_readings(o);
  r.configs.erase("rocehil-t5dfb-s1");
  EXPECT_NE(infrastructure_error([&] {
              lossless_in_force(o, r);
            }).find("no configuration for rocehil-t5dfb-s1"),
            std::string::npos);
  r = lossless_readings(o);
  r.configs["rocehil-t5dfb-s1"] = "{";
  EXPECT_NE(infrastructure_error([&] {
              lossless_in_force(o, r);
            }).find("/tmp/fs-tb/switchd/rocehil-t5dfb-s1.json"),
            std::string::npos);
  // A configuration without one of the switch's ports (one of another topology).
  TestbedOptions wider = o;
  wider.spines = 2;
  const Topology t = build_topology(wider, 64);
  r = lossless_readings(o);
  std::string config = dataplane::to_json_text(
      dataplane::switch_config(*t.find("l1"), wider, "/run/rocehil/x.counters"));
  const auto at = config.find("t5dfb-s1");
  ASSERT_NE(at, std::string::npos);
  config.replace(at, 8, "t5dfb-sX");
  r.configs["rocehil-t5dfb-l1"] = config;
  EXPECT_NE(infrastructure_error([&] { lossless_in_force(o, r); }).find("no port t5dfb-s1"),
            std::string::npos);
}

}  // namespace
}  // namespace rocehil::testbed
