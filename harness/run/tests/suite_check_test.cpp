// A suite against the inventory it runs on, before anything runs; and the injection's command.
#include "rocehil/run/suite_check.hpp"

#include <gtest/gtest.h>

#include "rocehil/common/error.hpp"
#include "rocehil/inventory/load.hpp"

namespace rocehil::run {
namespace {

constexpr std::string_view fabric_yaml = R"(schema_version: 1
name: small
defaults:
  agent: /opt/rocehil
  provider: soft
hosts:
  - name: h1
    address: 10.0.0.1
    rack: r1
    nics: [{netdev: eth1, ip: 198.18.1.11, link_gbps: 100, link: h1-l1}]
  - name: h2
    address: 10.0.0.2
    rack: r1
    nics: [{netdev: eth1, ip: 198.18.1.12, link_gbps: 100}]
  - name: cap
    address: 10.0.0.9
    nics: []
racks:
  - {name: r1, leaf: l1, hosts: [h1, h2]}
switches:
  - {name: l1, role: leaf, rack: r1}
  - {name: s1, role: spine, netns: ns-s1}
links:
  - {name: h1-l1, a: h1:eth1, b: l1:swp1, gbps: 100}
  - {name: l1-s1, a: l1:swp9, b: s1:swp1, gbps: 400}
captures:
  - {name: s1-mirror, host: cap, interface: m1, backend: pcap}
)";

inventory::Inventory small_fabric() {
  auto r = inventory::parse_inventory(fabric_yaml, "fabric.yaml");
  for (const auto& d : r.diagnostics) ADD_FAILURE() << inventory::to_string(d);
  return r.inventory.value();
}

suites::Suite suite_of(std::string_view tests) {
  auto r =
      suites::parse_suite("schema_version: 1\nname: s\ntests:\n" + std::string(tests), "s.yaml");
  for (const auto& d : r.diagnostics) ADD_FAILURE() << inventory::to_string(d);
  return r.suite.value();
}

TEST(SuiteCheck, ASuiteThatFitsHasNoProblems) {
  const auto suite = suite_of(
      "  - name: a\n    workload: allreduce\n    captures: [s1-mirror]\n"
      "  - name: b\n    workload: bw\n    inject: {from: s1, link: l1-s1}\n");
  EXPECT_TRUE(check_suite_against_inventory(suite, small_fabric()).empty());
}

// Each problem at the line that fixes it: a host selection at its `hosts:` (named so, not as
// the command line's --hosts), a capture point at its name in `captures:`, an injection at its
// `inject:`.
TEST(SuiteCheck, EveryProblemWithItsTestsLine) {
  const auto suite = suite_of(
      "  - name: a\n    workload: allreduce\n    hosts: h1\n    captures: [nowhere]\n"
      "  - name: b\n    workload: lat\n    hosts: 'rack:r9'\n"
      "  - name: c\n    workload: bw\n    inject: {from: l1, link: l1-s1}\n"
      "  - name: d\n    workload: bw\n    inject: {from: h2, link: l1-s1}\n");
  const auto problems = check_suite_against_inventory(suite, small_fabric());
  ASSERT_EQ(problems.size(), 5u);
  EXPECT_EQ(problems[0],
            "s.yaml:6:12: test 'a': hosts 'h1' give 1 NIC(s); a collective needs at least 2 ranks");
  EXPECT_EQ(problems[1],
            "s.yaml:7:16: test 'a': capture point 'nowhere' is not in fabric.yaml (it has: "
            "s1-mirror)");
  EXPECT_EQ(problems[2].rfind("s.yaml:10:12: test 'b': hosts 'rack:r9': ", 0), 0u) << problems[2];
  EXPECT_EQ(problems[2].find(": --hosts '"), std::string::npos) << problems[2];
  EXPECT_EQ(problems[3],
            "s.yaml:13:13: inject: 'l1' is a switch rocehil cannot run on; send from a host "
            "wired to the link instead (a switch only in a testbed's network namespace)");
  EXPECT_EQ(problems[4], "s.yaml:16:13: inject: 'h2' is not an end of link 'l1-s1' (l1 and s1)");
}

TEST(SuiteCheck, GpuMemoryNeedsAGpuPairedWithEachSidesNic) {
  std::string text(fabric_yaml);
  const std::string h1_nic = "nics: [{netdev: eth1, ip: 198.18.1.11, link_gbps: 100, link: h1-l1}]";
  ASSERT_NE(text.find(h1_nic), std::string::npos);
  text.replace(text.find(h1_nic), h1_nic.size(),
               "nics: [{netdev: eth1, ip: 198.18.1.11, link_gbps: 100, link: h1-l1, gpu: 0}]");
  auto parsed = inventory::parse_inventory(text, "fabric.yaml");
  ASSERT_TRUE(parsed.inventory.has_value());
  const auto suite = suite_of("  - name: g\n    workload: bw\n    hosts: h1,h2\n    memory: gpu\n");
  const auto problems = check_suite_against_inventory(suite, *parsed.inventory);
  ASSERT_EQ(problems.size(), 1u);  // h1's NIC has GPU 0; h2's has none
  EXPECT_EQ(problems[0],
            "s.yaml:4:5: test 'g': memory gpu, but fabric.yaml pairs no GPU with h2's NIC eth1 "
            "(add 'gpu: N' to it, or leave the test out on hosts without GPUs)");
}

TEST(SuiteCheck, AnInjectionRunsInTheSwitchsNamespaceOrOverSshOnAHost) {
  const auto inv = small_fabric();
  suites::Injection in;
  in.from = "s1";
  in.link = "l1-s1";
  in.priorities = {3, 4};
  in.duration_s = 1.5;
  const auto sw = injection_command(in, inv, "s.yaml", "/usr/bin/rocehil", nullptr);
  EXPECT_EQ(sw.iface, "swp1");
  EXPECT_EQ(sw.command.argv,
            (std::vector<std::string>{
                "ip",         "netns",    "exec",         "ns-s1",         "/usr/bin/rocehil",
                "inject",     "pfc",      "--iface",      "swp1",          "--priority",
                "3,4",        "--quanta", "65535",        "--pps",         "10000",
                "--duration", "1.5",      "--xon-at-end", "--no-progress", "--json"}));
  in.from = "h1";
  in.link = "h1-l1";
  in.kind = "pause";
  const auto host = injection_command(in, inv, "s.yaml", "/usr/bin/rocehil", nullptr);
  EXPECT_EQ(host.command.argv.front(), "ssh");
  // The remote words are quoted for the remote shell, the agent's path first.
  EXPECT_EQ(host.command.argv.back(),
            "'/opt/rocehil' 'inject' 'pause' '--iface' 'eth1' '--quanta' '65535' '--pps' "
            "'10000' '--duration' '1.5' '--xon-at-end' '--no-progress' '--json'");
}

}  // namespace
}  // namespace rocehil::run
