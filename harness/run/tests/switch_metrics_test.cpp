#include "rocehil/run/switch_metrics.hpp"

#include <gtest/gtest.h>

#include "rocehil/suites/grade.hpp"
#include "switch_fabric.hpp"

namespace rocehil::run {
namespace {

using testing::switch_fabric;

switches::PortDelta port(std::string name, std::uint64_t in_octets, std::uint64_t out_octets) {
  switches::PortDelta p;
  p.name = std::move(name);
  p.in_octets = in_octets;
  p.out_octets = out_octets;
  p.in_discards = 0;
  p.out_discards = 0;
  p.in_errors = 0;
  p.out_errors = 0;
  for (auto& v : p.pfc_rx) v = 0;
  for (auto& v : p.pfc_tx) v = 0;
  return p;
}

switches::SwitchDelta sw(std::string name, std::vector<switches::PortDelta> ports) {
  switches::SwitchDelta d;
  d.switch_name = std::move(name);
  d.pfc_served = true;
  d.ports = std::move(ports);
  return d;
}

std::vector<switches::SwitchDelta> cross_rack_case() {
  auto l1 = sw("l1", {port("swp1", 1000, 2000), port("swp51", 500, 600), port("swp52", 700, 800)});
  l1.ports[1].out_discards = 12;
  l1.ports[0].pfc_rx[3] = 40;
  auto l2 = sw("l2", {port("swp1", 900, 900), port("swp51", 1, 1), port("swp52", 1, 1)});
  l2.ports[0].queue_drops = 3;
  return {l1, l2, sw("s1", {port("swp1", 600, 10), port("swp2", 400, 990)}),
          sw("s2", {port("swp1", 300, 5), port("swp2", 100, 95)})};
}

TEST(SwitchScope, LeavesOfTheRacksAndSpinesWhenTrafficCrossesRacks) {
  const auto inv = switch_fabric();
  EXPECT_EQ(switches_in_scope(inv, {"h1", "h2"}),
            (std::vector<std::string>{"l1", "l2", "s1", "s2"}));
  EXPECT_EQ(switches_in_scope(inv, {"h1"}), (std::vector<std::string>{"l1"}));
}

TEST(SwitchMetrics, SumsNameTheSwitchPortsBehindThem) {
  const auto m = switch_metrics(switch_fabric(), cross_rack_case());
  EXPECT_EQ(m.values.at("switch_drops"), 15);
  EXPECT_EQ(m.where.at("switch_drops"), "l1:swp51 12, l2:swp1 3");
  EXPECT_EQ(m.values.at("switch_errors"), 0);
  EXPECT_EQ(m.values.at("switch_pfc_rx[3]"), 40);
  EXPECT_EQ(m.where.at("switch_pfc_rx[3]"), "l1:swp1 40");
  EXPECT_EQ(m.values.at("switch_pfc_tx[3]"), 0);
  // Spine loads from their leaf-facing ports' ifHCInOctets: s1 1000, s2 400; mean 700.
  EXPECT_NEAR(m.values.at("switch_spine_imbalance"), 1000.0 / 700.0, 1e-9);
  // A failed threshold names the ports.
  const auto g = suites::grade({*suites::parse_threshold("switch_drops <= 0").threshold}, m.values,
                               {}, m.unmeasured, m.where);
  EXPECT_EQ(g.results[0].evaluation.detail,
            "switch_drops = 15, needs <= 0; at l1:swp51 12, l2:swp1 3");
}

TEST(SwitchMetrics, ASwitchThatDidNotAnswerMakesEveryMetricAbsentNotZero) {
  auto deltas = cross_rack_case();
  deltas[2].error = "after the case: no answer from 198.19.1.201";
  deltas[2].ports.clear();
  const auto m = switch_metrics(switch_fabric(), deltas);
  EXPECT_FALSE(m.values.contains("switch_drops"));
  EXPECT_EQ(m.unmeasured.at("switch_drops"),
            "switch s1 gave no counters: after the case: no answer from 198.19.1.201");
  EXPECT_TRUE(m.unmeasured.contains("switch_pfc_rx"));
}

TEST(SwitchMetrics, PfcIsAbsentWhereASwitchServesNoPfcMib) {
  auto deltas = cross_rack_case();
  deltas[1].pfc_served = false;
  const auto m = switch_metrics(switch_fabric(), deltas);
  EXPECT_FALSE(m.values.contains("switch_pfc_rx[3]"));
  EXPECT_NE(m.unmeasured.at("switch_pfc_rx").find("switch l2 does not serve CISCO-PFC-EXT-MIB"),
            std::string::npos);
  EXPECT_EQ(m.values.at("switch_drops"), 15);  // the others stand
}

TEST(SwitchMetrics, NoSwitchWithSnmpSaysSo) {
  const auto m = switch_metrics(switch_fabric(), {});
  EXPECT_NE(m.unmeasured.at("switch_drops").find("snmp settings"), std::string::npos);
  const auto off = switches_not_polled();
  EXPECT_NE(off.unmeasured.at("switch_pfc_rx").find("--no-switches"), std::string::npos);
  EXPECT_TRUE(off.values.empty());
}

TEST(SwitchReconciliation, HostPortPfcAgainstTheNicsPauseFrames) {
  auto ports = host_switch_ports(switch_fabric(), {"h1", "h2"});
  ASSERT_EQ(ports.size(), 2u);
  EXPECT_EQ(ports[0].switch_name, "l1");
  EXPECT_EQ(ports[0].port, "swp1");
  ports[0].nic_tx_pause = 40;
  ports[1].nic_tx_pause = 0;
  const auto r = switch_pfc_reconciliation(ports, cross_rack_case());
  EXPECT_EQ(r.measured.values.at("switch_pfc_reconciliation"), 1.0);
  ports[1].nic_tx_pause.reset();  // a veth has no pause counters
  const auto absent = switch_pfc_reconciliation(ports, cross_rack_case());
  EXPECT_NE(absent.measured.unmeasured.at("switch_pfc_reconciliation").find("h2's NIC"),
            std::string::npos);
}

// Per priority: l1's port to h1 received 40 frames on priority 3 (cross_rack_case), none on 4.
TEST(SwitchReconciliation, PerPriorityEachSideCountsThatPriorityAlone) {
  auto ports = host_switch_ports(switch_fabric(), {"h1", "h2"});
  ports[0].nic_tx_pause = 20;  // h1's NIC says it sent 20 on priority 3: half arrived twice?
  ports[1].nic_tx_pause = 0;
  const auto three = switch_pfc_reconciliation(ports, cross_rack_case(), 3);
  EXPECT_EQ(three.measured.values.at("switch_pfc_reconciliation[3]"), 2.0);
  EXPECT_EQ(*three.switches, 40);
  EXPECT_FALSE(three.measured.values.contains("switch_pfc_reconciliation"));
  ports[0].nic_tx_pause = 0;
  const auto four = switch_pfc_reconciliation(ports, cross_rack_case(), 4);
  EXPECT_EQ(four.measured.unmeasured.at("switch_pfc_reconciliation[4]"),
            "the NICs sent no PFC frame (their switch ports received 0)");
}

TEST(SwitchReconciliation, MirrorBytesAgainstTheMirroredSpinePortsOctets) {
  const auto inv = switch_fabric();
  // spine-to-leaf on s1: its ports toward l1 and l2 sent 10 + 990 octets.
  const auto r = switch_mirror_reconciliation(inv, {{"s1-mirror", 990.0}}, cross_rack_case());
  EXPECT_NEAR(r.measured.values.at("switch_mirror_reconciliation"), 0.99, 1e-12);
  EXPECT_EQ(*r.switches, 1000);
  const auto filtered =
      switch_mirror_reconciliation(inv, {{"s1-mirror", std::nullopt}}, cross_rack_case());
  EXPECT_NE(filtered.measured.unmeasured.at("switch_mirror_reconciliation").find("filter: all"),
            std::string::npos);
}

}  // namespace
}  // namespace rocehil::run
