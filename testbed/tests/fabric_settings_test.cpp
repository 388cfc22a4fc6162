#include "rocehil/testbed/fabric_settings.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <functional>
#include <sstream>
#include <utility>
#include <vector>

#include "rocehil/common/error.hpp"
#include "rocehil/testbed/scripts.hpp"

namespace rocehil::testbed {
namespace {

// The testbed the captures in tests/data/fabric_settings come from (SOURCES.md there).
TestbedOptions captured_options() {
  TestbedOptions o;
  o.dir = "/tmp/fs-tb";
  o.id = "t5dfb";
  o.hosts = 2;
  o.racks = 2;
  o.spines = 1;
  return o;
}

Topology captured_topology(const TestbedOptions& o = captured_options()) {
  return build_topology(o, 64);
}

std::string data(const std::string& name) {
  const std::string path = std::string(ROCEHIL_TESTBED_DATA) + "/fabric_settings/" + name;
  std::ifstream in(path);
  EXPECT_TRUE(in) << path;
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// What `read_fabric_settings` would have read in each namespace of the captured testbed.
FabricReadings readings(const std::string& nft_capture, const std::string& tc_capture) {
  FabricReadings r;
  for (const auto& ns : captured_topology().namespaces) {
    if (is_switch(ns)) r.nft[ns.netns] = data(nft_capture + "/" + ns.name + ".nft.json");
    r.tc[ns.netns] = data(tc_capture + "/" + ns.name + ".tc.json");
  }
  return r;
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

TEST(FabricSettings, EcnMarkRateRoundTripsEveryMbps) {
  for (int mbps = 1; mbps <= 100'000; ++mbps)
    ASSERT_EQ(ecn_mark_mbps_of(ecn_mark_packets_per_second(mbps)), mbps) << mbps;
}

TEST(FabricSettings, EcnMarkRateNoValueWritesHasNoMbps) {
  EXPECT_EQ(ecn_mark_packets_per_second(300), 35112);
  EXPECT_EQ(ecn_mark_mbps_of(35113), std::nullopt);  // between 300 and 301 Mb/s
  EXPECT_EQ(ecn_mark_mbps_of(0), std::nullopt);
  EXPECT_EQ(ecn_mark_mbps_of(ecn_mark_packets_per_second(100'000) + 117), std::nullopt);
  EXPECT_EQ(ecn_mark_mbps_of(1LL << 62), std::nullopt);
}

TEST(FabricSettings, TbfRateIsBytesPerSecondOfWholeMbps) {
  EXPECT_EQ(tbf_mbps_of(125'000'000), 1000);           // tc: rate 1Gbit
  EXPECT_EQ(tbf_mbps_of(12'500'000'000ULL), 100'000);  // above 32 bits: tbf's rate64
  EXPECT_EQ(tbf_mbps_of(125'001), std::nullopt);
  EXPECT_EQ(tbf_mbps_of(0), std::nullopt);
}

TEST(FabricSettings, ParsesEcnLimitsByPortFromNftJson) {
  const auto limits = parse_ecn_mark_limits(data("defaults/l1.nft.json"), "rocehil_t5dfb");
  EXPECT_EQ(limits, (std::map<std::string, long long>{{"t5dfb-h1", 35112}, {"t5dfb-s1", 35112}}));
  EXPECT_TRUE(parse_ecn_mark_limits(data("defaults/l1.nft.json"), "rocehil_other").empty());
}

TEST(FabricSettings, LimitThatIsNotPacketsPerSecondIsAnError) {
  std::string bytes = data("defaults/l1.nft.json");
  const std::string per = "\"per\": \"second\"";
  bytes.replace(bytes.find(per), per.size(), "\"per\": \"second\", \"rate_unit\": \"bytes\"");
  EXPECT_NE(error_of([&] { parse_ecn_mark_limits(bytes, "rocehil_t5dfb"); }).find("t5dfb-h1"),
            std::string::npos);
  EXPECT_NE(error_of([] { parse_ecn_mark_limits("table ip x {", "x"); }).find("nft printed"),
            std::string::npos);
}

TEST(FabricSettings, ParsesRootTbfRatesAndSkipsOtherQdiscs) {
  // The spine's uplinks also carry the mirror's clsact; its mirror and management ports none.
  EXPECT_EQ(
      parse_tbf_rates(data("defaults/s1.tc.json")),
      (std::map<std::string, std::uint64_t>{{"t5dfb-l1", 50'000'000}, {"t5dfb-l2", 50'000'000}}));
  EXPECT_TRUE(parse_tbf_rates(data("defaults/cap.tc.json")).empty());
  EXPECT_TRUE(parse_tbf_rates("[]").empty());
  EXPECT_NE(error_of([] { parse_tbf_rates("{}"); }).find("tc printed"), std::string::npos);
}

TEST(FabricSettings, DefaultsReadBackAsUpSetThem) {
  const auto in_force = fabric_settings_in_force(captured_topology(), captured_options(),
                                                 readings("defaults", "defaults"));
  EXPECT_EQ(in_force, (std::map<std::string, std::string>{{"switch.ecn_mark_mbps", "300"},
                                                          {"switch.uplink_mbps", "400"},
                                                          {"switch.host_mbps", "1000"}}));
}

TEST(FabricSettings, SetValuesReadBackFromTheKernel) {
  // Captured after `rocehil testbed set switch.ecn_mark_mbps=150 switch.uplink_mbps=200
  // switch.host_mbps=0`: no tbf left on host links reads as 0.
  const auto in_force = fabric_settings_in_force(captured_topology(), captured_options(),
                                                 readings("changed", "changed"));
  EXPECT_EQ(in_force, (std::map<std::string, std::string>{{"switch.ecn_mark_mbps", "150"},
                                                          {"switch.uplink_mbps", "200"},
                                                          {"switch.host_mbps", "0"}}));
}

TEST(FabricSettings, OnePortChangedByHandIsAnErrorNamingItAndTheOthers) {
  // l1's tbf toward s1 at 200 Mb/s; the three other uplink ports at 400.
  const std::string tc = error_of([] {
    fabric_settings_in_force(captured_topology(), captured_options(),
                             readings("defaults", "one_port_changed"));
  });
  EXPECT_EQ(tc,
            "switch.uplink_mbps is not the same on every port: rocehil-t5dfb-l1 t5dfb-s1 has 200, "
            "rocehil-t5dfb-l2 t5dfb-s1 has 400 (as 3 of 4 ports do); set it again with 'rocehil "
            "testbed set switch.uplink_mbps=N --dir /tmp/fs-tb'");
  // s1's rule toward l2 at 150 Mb/s, the five other ports' at 300.
  const std::string nft = error_of([] {
    fabric_settings_in_force(captured_topology(), captured_options(),
                             readings("one_port_changed", "defaults"));
  });
  EXPECT_NE(nft.find("switch.ecn_mark_mbps is not the same on every port: rocehil-t5dfb-s1 "
                     "t5dfb-l2 has 150, rocehil-t5dfb-l1 t5dfb-h1 has 300 (as 5 of 6 ports do)"),
            std::string::npos)
      << nft;
}

TEST(FabricSettings, NoEcnTestbedHasNoMarkingRate) {
  TestbedOptions o = captured_options();
  o.ecn = false;
  FabricReadings r = readings("defaults", "defaults");
  r.nft.clear();  // a --no-ecn testbed has no table to read
  const auto in_force = fabric_settings_in_force(captured_topology(o), o, r);
  EXPECT_FALSE(in_force.contains("switch.ecn_mark_mbps"));
  EXPECT_EQ(in_force.at("switch.uplink_mbps"), "400");
}

TEST(FabricSettings, PortWithoutItsRuleIsAnError) {
  FabricReadings r = readings("defaults", "defaults");
  r.nft["rocehil-t5dfb-l1"] = R"({"nftables": [{"metainfo": {"version": "1.0.6"}}]})";
  EXPECT_NE(error_of([&] {
              fabric_settings_in_force(captured_topology(), captured_options(), r);
            }).find("rocehil-t5dfb-l1: table rocehil_t5dfb has no ECN marking rule for t5dfb-h1"),
            std::string::npos);
}

TEST(FabricSettings, WithSettingChecksNameRangeAndEcn) {
  const TestbedOptions o = captured_options();
  EXPECT_EQ(with_fabric_setting(o, "switch.ecn_mark_mbps", 150).ecn_mark_mbps, 150);
  EXPECT_EQ(with_fabric_setting(o, "switch.uplink_mbps", 0).uplink_mbps, 0);
  EXPECT_EQ(with_fabric_setting(o, "switch.host_mbps", 100'000).host_mbps, 100'000);
  const auto bad = [&](std::string_view name, int value) {
    try {
      with_fabric_setting(o, name, value);
    } catch (const Error& e) {
      EXPECT_EQ(e.exit_code(), ExitCode::bad_input);
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(bad("ecn_mark_mbps", 150),
            "'ecn_mark_mbps' is not a testbed switch setting; the testbed sets "
            "switch.ecn_mark_mbps, switch.uplink_mbps, switch.host_mbps");
  EXPECT_EQ(bad("switch.ecn_mark_mbps", 0),
            "switch.ecn_mark_mbps=0: out of range; it takes 1 to 100000 (Mb/s)");
  EXPECT_EQ(bad("switch.uplink_mbps", 100'001),
            "switch.uplink_mbps=100001: out of range; it takes 0 to 100000 (Mb/s), 0 unshaped");
  EXPECT_EQ(bad("switch.host_mbps", -1),
            "switch.host_mbps=-1: out of range; it takes 0 to 100000 (Mb/s), 0 unshaped");
  TestbedOptions no_ecn = o;
  no_ecn.ecn = false;
  EXPECT_THROW(with_fabric_setting(no_ecn, "switch.ecn_mark_mbps", 150), Error);
  EXPECT_EQ(with_fabric_setting(no_ecn, "switch.uplink_mbps", 200).uplink_mbps, 200);
}

TEST(FabricSettings, EcnReplaceIsOneTransactionOfUpsRuleset) {
  const TestbedOptions o = with_fabric_setting(captured_options(), "switch.ecn_mark_mbps", 150);
  const Topology t = captured_topology(o);
  const std::string batch = ecn_marking_replace_batch(*t.find("s1"), t, o);
  EXPECT_EQ(batch, "add table ip rocehil_t5dfb\ndelete table ip rocehil_t5dfb\n" +
                       namespace_nft_ruleset(*t.find("s1"), t, o));
  EXPECT_NE(batch.find("limit rate over 17556/second burst 17 packets"), std::string::npos);
  EXPECT_EQ(ecn_marking_replace_batch(*t.find("h1"), t, o), "");
}

TEST(FabricSettings, ShapingReplaceUsesUpsTbfAndDeletesOnlyExistingOnes) {
  const TestbedOptions o = with_fabric_setting(captured_options(), "switch.uplink_mbps", 200);
  const Topology t = captured_topology(o);
  const std::string l1 = shaping_replace_batch(*t.find("l1"), LinkKind::uplink, o, {});
  EXPECT_EQ(l1, "qdisc replace dev t5dfb-s1 root tbf rate 200mbit burst 25000 latency 5ms\n");
  // The same qdisc `up` adds for that rate, word for word.
  const std::string up = namespace_tc_batch(*t.find("l1"), t, o);
  EXPECT_NE(up.find("qdisc add dev t5dfb-s1 root tbf rate 200mbit burst 25000 latency 5ms\n"),
            std::string::npos)
      << up;

  const TestbedOptions unshaped = with_fabric_setting(captured_options(), "switch.host_mbps", 0);
  const Topology u = captured_topology(unshaped);
  EXPECT_EQ(
      shaping_replace_batch(*u.find("l1"), LinkKind::host, unshaped, {"t5dfb-h1", "t5dfb-s1"}),
      "qdisc del dev t5dfb-h1 root\n");
  EXPECT_EQ(shaping_replace_batch(*u.find("h1"), LinkKind::host, unshaped, {}), "");
  // A --lossless testbed's hosts keep 1 ms of queue, as up writes it.
  TestbedOptions lossless = with_fabric_setting(captured_options(), "switch.host_mbps", 500);
  lossless.lossless = true;
  const Topology l = captured_topology(lossless);
  const std::string h1 = shaping_replace_batch(*l.find("h1"), LinkKind::host, lossless, {});
  EXPECT_EQ(h1, "qdisc replace dev t5dfb-nic0 root tbf rate 500mbit burst 62500 latency 1ms\n");
  EXPECT_NE(namespace_tc_batch(*l.find("h1"), l, lossless)
                .find("qdisc add dev t5dfb-nic0 root tbf rate 500mbit burst 62500 latency 1ms\n"),
            std::string::npos);
}

TEST(FabricSettings, AGuestsNicQueueStaysDeepWhenItsRateChanges) {
  // `testbed set switch.host_mbps` on a --vm testbed once wrote a 1 or 5 ms tbf over the
  // guest's 4 MiB NIC queue: rxe's window then tail-dropped there again.
  TestbedOptions vm = with_fabric_setting(captured_options(), "switch.host_mbps", 500);
  vm.vm.enabled = true;
  const Topology t = captured_topology(vm);
  const Namespace& h1 = *t.find("h1");
  const std::string set = shaping_replace_batch(h1, LinkKind::host, vm, {});
  EXPECT_EQ(set, fmt::format("qdisc replace dev t5dfb-nic0 root tbf rate 500mbit burst 62500 "
                             "limit {}\n",
                             guest_nic_queue_bytes));
  // Word for word what `up` adds.
  EXPECT_NE(namespace_tc_batch(h1, t, vm).find(set.substr(std::string("qdisc replace").size())),
            std::string::npos);
}

std::string bad_input(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), ExitCode::bad_input) << e.what();
    return e.what();
  }
  return "no error";
}

TEST(FabricSettings, SetArgumentsAreCheckedAgainstTheTestbedsKind) {
  TestbedOptions lossless = captured_options();
  lossless.lossless = true;
  // Every knob by its catalogue text, the rates beside them; checked together, so kmin may pass
  // the old kmax (500) in the same command, in either order.
  const TestbedOptions o =
      with_switch_settings(lossless, {{"switch.wred_kmin_kb", "600"},
                                      {"switch.wred_kmax_kb", "800"},
                                      {"switch.xoff_kb", "300"},
                                      {"switch.ecn_enable", "0"},
                                      {"switch.pfc_priorities", "4,3"},
                                      {"switch.dscp_to_tc", "46:5,26:3"},
                                      {"switch.wred_pmax_percent", "20"},
                                      {"switch.pfc_watchdog_detection_ms", "0"},
                                      {"switch.pfc_watchdog_restoration_ms", "50"},
                                      {"switch.uplink_mbps", "200"}});
  EXPECT_EQ(o.knobs.wred_kmin_kb, 600);
  EXPECT_EQ(o.knobs.wred_kmax_kb, 800);
  EXPECT_EQ(o.knobs.xoff_kb, 300);
  EXPECT_FALSE(o.knobs.ecn_enable);
  EXPECT_EQ(o.knobs.pfc_priorities, (std::vector<int>{3, 4}));
  EXPECT_EQ(o.knobs.dscp_to_tc, "26:3,46:5");
  EXPECT_EQ(o.knobs.watchdog_detection_ms, 0);
  EXPECT_EQ(o.uplink_mbps, 200);
  EXPECT_EQ(with_switch_settings(lossless,
                                 {{"switch.wred_kmax_kb", "800"}, {"switch.wred_kmin_kb", "600"}})
                .knobs.wred_kmin_kb,
            600);
  EXPECT_EQ(switch_setting_text(o, "switch.pfc_priorities"), "3,4");
  EXPECT_EQ(switch_setting_text(with_switch_settings(lossless, {{"switch.pfc_priorities", ""}}),
                                "switch.pfc_priorities"),
            "none");
  EXPECT_EQ(switch_setting_text(lossless, "switch.dscp_to_tc"), "default");
  EXPECT_EQ(switch_setting_text(o, "switch.uplink_mbps"), "200");

  // Each refusal one line, naming the setting and the fix; nothing returned.
  const TestbedOptions kernel = captured_options();
  EXPECT_EQ(bad_input([&] {
              with_switch_settings(kernel, {{"switch.xoff_kb", "300"}});
            }),
            "switch.xoff_kb: a knob of the lossless switches, and testbed t5dfb has none; bring "
            "it up with 'rocehil testbed up --lossless --dir /tmp/fs-tb' to set it");
  EXPECT_EQ(bad_input([&] {
              with_switch_settings(lossless, {{"switch.ecn_mark_mbps", "150"}});
            }),
            "switch.ecn_mark_mbps: testbed t5dfb has lossless switches, which have no rate rule "
            "to set: marking is by queue depth: set switch.wred_kmin_kb/kmax_kb/pmax_percent");
  EXPECT_EQ(bad_input([&] {
              with_switch_settings(lossless, {{"switch.wred_kmin_kb", "600"}});
            }),
            "switch.wred_kmin_kb=600 is above switch.wred_kmax_kb=200: give kmin <= kmax");
  EXPECT_EQ(bad_input([&] {
              with_switch_settings(lossless, {{"switch.xoff_kb", "5"}});
            }),
            "switch.xoff_kb=5 is out of range: give 10 to 1000000");
  EXPECT_EQ(bad_input([&] {
              with_switch_settings(kernel, {{"switch.uplink_mbps", "fast"}});
            }),
            "switch.uplink_mbps=fast: 'fast' is not a whole number of Mb/s");
  EXPECT_NE(bad_input([&] {
              with_switch_settings(lossless, {{"switch.dscp_to_tc", "3:3,3:4"}});
            }).find("switch.dscp_to_tc: DSCP 3 is given twice"),
            std::string::npos);
  EXPECT_NE(bad_input([&] {
              with_switch_settings(lossless, {{"switch.mtu", "1500"}});
            })
                .find("'switch.mtu' is not a testbed switch setting; the testbed sets "
                      "switch.ecn_mark_mbps, switch.uplink_mbps, switch.host_mbps, "
                      "switch.ecn_enable, "),
            std::string::npos);
  // The rates keep their behaviour on a kernel fabric.
  EXPECT_EQ(with_switch_settings(kernel, {{"switch.ecn_mark_mbps", "150"}}).ecn_mark_mbps, 150);
}

TEST(FabricSettings, KminAndKmaxAreWrittenInAnOrderEveryStepOfWhichIsValid) {
  using Wanted = std::vector<std::pair<std::string, std::string>>;
  const std::map<std::string, std::string> now{{"switch.wred_kmin_kb", "125"},
                                               {"switch.wred_kmax_kb", "500"}};
  // Raising kmin past kmax 500: kmax first, whatever order they were given in.
  const Wanted up_max_first{{"switch.wred_kmax_kb", "800"}, {"switch.wred_kmin_kb", "600"}};
  EXPECT_EQ(switch_settings_write_order(
                now, {{"switch.wred_kmin_kb", "600"}, {"switch.wred_kmax_kb", "800"}}),
            up_max_first);
  EXPECT_EQ(switch_settings_write_order(now, up_max_first), up_max_first);
  // Lowering both below kmin 125: kmin first.
  const Wanted down{
      {"switch.xoff_kb", "300"}, {"switch.wred_kmin_kb", "50"}, {"switch.wred_kmax_kb", "100"}};
  EXPECT_EQ(switch_settings_write_order(now, {{"switch.xoff_kb", "300"},
                                              {"switch.wred_kmax_kb", "100"},
                                              {"switch.wred_kmin_kb", "50"}}),
            down);
  // Both orders' every step checked against the knobs' own rule, undone in reverse too.
  for (const Wanted& w : {up_max_first, down}) {
    TestbedOptions o = captured_options();
    o.lossless = true;
    o.knobs.wred_kmin_kb = 125;  // as `now` says
    o.knobs.wred_kmax_kb = 500;
    TestbedOptions step = o;
    for (const auto& a : w) step = with_switch_settings(step, {a});
    for (auto a = w.rbegin(); a != w.rend(); ++a)
      step = with_switch_settings(step, {{a->first, switch_setting_text(o, a->first)}});
    EXPECT_EQ(step.knobs.wred_kmin_kb, 125);
    EXPECT_EQ(step.knobs.wred_kmax_kb, 500);
  }
}

}  // namespace
}  // namespace rocehil::testbed
