// DSCP classes on a host whose NIC trusts PCP are refused when validate holds the suite against
// the inventory; the trust is the test's settings, else the suite's, else the host's declared.
#include <gtest/gtest.h>

#include <string>

#include "rocehil/inventory/load.hpp"
#include "rocehil/run/suite_check.hpp"

namespace rocehil::run {
namespace {

const std::string trust_fabric = R"(schema_version: 1
name: small
defaults:
  agent: /opt/rocehil
  provider: soft
hosts:
  - name: h1
    address: 10.0.0.1
    nics: [{netdev: eth1, ip: 198.18.1.11, link_gbps: 100}]
    settings: {trust: pcp}
  - name: h2
    address: 10.0.0.2
    nics: [{netdev: eth1, ip: 198.18.1.12, link_gbps: 100}]
    settings: {trust: dscp}
  - name: h3
    address: 10.0.0.3
    nics: [{netdev: eth1, ip: 198.18.1.13, link_gbps: 100}]
)";

std::vector<std::string> trust_problems(const std::string& suite_text) {
  auto inv = inventory::parse_inventory(trust_fabric, "fabric.yaml");
  for (const auto& d : inv.diagnostics) ADD_FAILURE() << inventory::to_string(d);
  auto s = suites::parse_suite(suite_text, "s.yaml");
  for (const auto& d : s.diagnostics) ADD_FAILURE() << inventory::to_string(d);
  return check_suite_against_inventory(s.suite.value(), inv.inventory.value());
}

const std::string trust_head = "schema_version: 1\nname: s\n";

TEST(TrustCheck, DscpClassesOnAPcpTrustingHostAreRefusedAtTheClass) {
  EXPECT_EQ(trust_problems(trust_head + "tests:\n  - name: a\n    workload: bw\n    qps: 2\n"
                                        "    traffic_class: {per_qp: [106, 98]}\n"),
            std::vector<std::string>{
                "s.yaml:7:20: test 'a': traffic_class sets DSCP 26,24, but h1 trusts PCP "
                "(fabric.yaml:10:16): its switch queues by the VLAN priority (sl), not by DSCP, "
                "so the classes would not choose its queues; set sl, or trust dscp"});
  EXPECT_EQ(trust_problems(trust_head + "tests:\n  - name: a\n    workload: bw\n"
                                        "    traffic_class: 106\n")
                .size(),
            1u);
}

TEST(TrustCheck, TheDefaultClassAndDscpTrustPass) {
  // Not written: the class is rocehil's default, not the suite's choice.
  EXPECT_TRUE(trust_problems(trust_head + "tests:\n  - name: a\n    workload: bw\n").empty());
  // h2 trusts DSCP; h3 declares nothing, so is not judged.
  EXPECT_TRUE(trust_problems(trust_head + "tests:\n  - name: a\n    workload: bw\n"
                                          "    hosts: h2,h3\n    traffic_class: 106\n")
                  .empty());
}

TEST(TrustCheck, TheSuitesOrTheTestsSettingsWin) {
  EXPECT_TRUE(trust_problems(trust_head + "settings: {trust: dscp}\ntests:\n  - name: a\n"
                                          "    workload: bw\n    traffic_class: 106\n")
                  .empty());
  const auto by_test = trust_problems(trust_head +
                                      "settings: {trust: dscp}\ntests:\n  - name: a\n"
                                      "    workload: bw\n    traffic_class: 106\n"
                                      "    settings: {trust: pcp}\n");
  ASSERT_EQ(by_test.size(), 2u);  // both hosts, as the test sets it for both
  EXPECT_NE(by_test[0].find("h1 trusts PCP (s.yaml:8:16)"), std::string::npos) << by_test[0];
  EXPECT_NE(by_test[1].find("h2 trusts PCP"), std::string::npos) << by_test[1];
}

}  // namespace
}  // namespace rocehil::run
