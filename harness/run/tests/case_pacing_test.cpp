// A test's rate against its sender's NIC before anything runs, resolved to bits per second for
// the agent, and run.json's pacing summary of what the sender reached.
#include "cases/case_pacing.hpp"

#include <gtest/gtest.h>

#include "rocehil/inventory/load.hpp"
#include "rocehil/run/suite_check.hpp"

namespace rocehil::run {
namespace {

constexpr std::string_view fabric_yaml = R"(schema_version: 1
name: small
defaults:
  agent: /opt/rocehil
  provider: soft
hosts:
  - name: h0
    address: 10.0.0.3
    nics: [{netdev: eth1, ip: 198.18.1.13}]
  - name: h1
    address: 10.0.0.1
    nics: [{netdev: eth1, ip: 198.18.1.11, link_gbps: 1}]
  - name: h2
    address: 10.0.0.2
    nics: [{netdev: eth1, ip: 198.18.1.12, link_gbps: 1}]
  - name: h9
    address: 10.0.0.9
    nics: [{netdev: eth1, ip: 198.18.1.19}]
)";

inventory::Inventory fabric() {
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

TEST(CasePacing, ARateWithinTheSendersLinkFits) {
  const auto suite = suite_of(
      "  - name: half\n    workload: bw\n    hosts: h1,h2\n    rate: 50%\n"
      "  - name: abs\n    workload: bw\n    hosts: h1,h2\n    rate: 400Mbit/s\n"
      "  - name: full\n    workload: bw\n    hosts: h1,h2\n    rate: 1Gbit/s\n");
  EXPECT_EQ(check_suite_against_inventory(suite, fabric()), std::vector<std::string>{});
}

TEST(CasePacing, ARateAboveTheSendersLinkIsRefusedAtTheRate) {
  const auto suite =
      suite_of("  - name: fast\n    workload: bw\n    hosts: h1,h2\n    rate: 2.5Gbit/s\n");
  EXPECT_EQ(check_suite_against_inventory(suite, fabric()),
            std::vector<std::string>{
                "s.yaml:7:11: test 'fast': rate '2.5Gbit/s': above h1's link of 1 Gbit/s: a "
                "sender cannot send faster than its NIC's port (lower the rate, or write it as a "
                "share such as 50%)"});
}

TEST(CasePacing, AShareOfALinkTheInventoryDoesNotKnowIsRefused) {
  const auto suite =
      suite_of("  - name: share\n    workload: bw\n    hosts: h0,h1\n    rate: 55%\n");
  EXPECT_EQ(check_suite_against_inventory(suite, fabric()),
            std::vector<std::string>{
                "s.yaml:7:11: test 'share': rate '55%': a share of the link, but the inventory "
                "gives no link_gbps for h0's NIC eth1 (add 'link_gbps' to it, or write the rate "
                "in bit/s)"});
  // Only the sender's (the first host in the inventory's order) link counts.
  const auto other =
      suite_of("  - name: share\n    workload: bw\n    hosts: h1,h9\n    rate: 55%\n");
  EXPECT_EQ(check_suite_against_inventory(other, fabric()), std::vector<std::string>{});
}

TEST(CasePacing, TheAgentGetsBitsPerSecond) {
  const auto inv = fabric();
  const auto half = suite_of("  - name: h\n    workload: bw\n    rate: 55%\n");
  EXPECT_DOUBLE_EQ(case_traffic::sender_rate_bps(half.tests[0].settings, inv.hosts[1].nics[0]),
                   0.55e9);
  const auto abs = suite_of("  - name: a\n    workload: bw\n    rate: 300Mbit/s\n");
  EXPECT_DOUBLE_EQ(case_traffic::sender_rate_bps(abs.tests[0].settings, inv.hosts[0].nics[0]),
                   300e6);
  const auto none = suite_of("  - name: n\n    workload: bw\n");
  EXPECT_EQ(case_traffic::sender_rate_bps(none.tests[0].settings, inv.hosts[1].nics[0]), 0);
}

TEST(CasePacing, RunJsonSaysWhatWasAskedHowItWasHeldAndWhatWasReached) {
  const auto inv = fabric();
  const auto suite = suite_of("  - name: h\n    workload: bw\n    rate: 50%\n");
  agent::ResultsEvent r;
  r.seconds = 2;
  r.bytes = 125'000'000;  // 1e9 bits in 2 s
  r.pacing = agent::PacingReport{.method = "engine",
                                 .asked_bps = 5e8,
                                 .per_qp_bps = 0,
                                 .nic_refused = "rxe0: no packet pacing"};
  const auto j = case_traffic::pacing_json(suite.tests[0].settings, "h1", inv.hosts[1].nics[0], r);
  EXPECT_EQ(j["rate"], "50%");
  const auto& s = j["senders"][0];
  EXPECT_EQ(s["host"], "h1");
  EXPECT_EQ(s["asked_bps"], 5e8);
  EXPECT_EQ(s["link_gbps"], 1);
  EXPECT_EQ(s["method"], "engine");
  EXPECT_EQ(s["nic_refused"], "rxe0: no packet pacing");
  EXPECT_DOUBLE_EQ(s["reached_bps"].get<double>(), 5e8);
  // Nothing measured: no reached rate at all, never 0.
  r.seconds = 0;
  r.bytes = 0;
  const auto unmeasured =
      case_traffic::pacing_json(suite.tests[0].settings, "h1", inv.hosts[1].nics[0], r);
  EXPECT_FALSE(unmeasured["senders"][0].contains("reached_bps"));
  // An unpaced test has no pacing summary.
  const auto plain = suite_of("  - name: p\n    workload: bw\n");
  EXPECT_TRUE(
      case_traffic::pacing_json(plain.tests[0].settings, "h1", inv.hosts[1].nics[0], r).is_null());
}

// Within 10% of the asked rate is held; short of it, run.json says whether the pacer or the
// sender was the limit, from the time the token bucket measured holding the sender back.
TEST(CasePacing, ARateShortOfTheAskedOneSaysWhetherThePacerOrTheSenderHeldIt) {
  const auto inv = fabric();
  const auto suite = suite_of("  - name: h\n    workload: bw\n    rate: 50%\n");
  agent::ResultsEvent r;
  r.seconds = 4;
  r.bytes = 230'000'000;  // 0.46 Gbit/s of 0.5 asked: 92%, held
  r.pacing = agent::PacingReport{.method = "engine", .asked_bps = 5e8, .held_s = 1.7};
  auto s = case_traffic::pacing_json(suite.tests[0].settings, "h1", inv.hosts[1].nics[0],
                                     r)["senders"][0];
  EXPECT_DOUBLE_EQ(s["reached_ratio"].get<double>(), 0.92);
  EXPECT_EQ(s["held"], true);
  EXPECT_EQ(s["held_back_s"], 1.7);
  EXPECT_FALSE(s.contains("why_not_held"));

  // 0.2 of 0.5 with the bucket holding 0.01 s of 4: the sender was the limit (rxe under TCG).
  r.bytes = 100'000'000;
  r.pacing->held_s = 0.01;
  s = case_traffic::pacing_json(suite.tests[0].settings, "h1", inv.hosts[1].nics[0],
                                r)["senders"][0];
  EXPECT_EQ(s["held"], false);
  EXPECT_EQ(s["why_not_held"],
            "reached 40% of the rate asked while the token bucket held it back only 0.2% of its "
            "4.0 s: the sender itself (its CPU, NIC or path) went no faster; an unpaced run of "
            "the test shows its ceiling");
  // The same rate with the bucket holding half the time: not the sender's ceiling.
  r.pacing->held_s = 2;
  s = case_traffic::pacing_json(suite.tests[0].settings, "h1", inv.hosts[1].nics[0],
                                r)["senders"][0];
  EXPECT_NE(s["why_not_held"].get<std::string>().find("held it back 50.0% of its 4.0 s"),
            std::string::npos);
  // Short, and most of the shortfall tokens the bucket threw away full: the sender came back
  // too late (an emulated guest whose sleeps overshoot the 5 ms burst).
  r.pacing->held_s = 3.5;
  r.pacing->lost_s = 1.2;
  s = case_traffic::pacing_json(suite.tests[0].settings, "h1", inv.hosts[1].nics[0],
                                r)["senders"][0];
  EXPECT_EQ(s["lost_to_full_bucket_s"], 1.2);
  EXPECT_EQ(s["why_not_held"],
            "reached 40% of the rate asked: 1.20 s of its 4.0 s worth of tokens overflowed the "
            "token bucket's burst while the sender was away (asleep past its wake-up, or its "
            "queues full): the sender came back too late, not the pacer held it; the results' "
            "cpu says how late its threads woke");
  r.pacing->lost_s = 0.1;  // a shortfall of 60% (2.4 s) not explained by 0.1 s lost
  s = case_traffic::pacing_json(suite.tests[0].settings, "h1", inv.hosts[1].nics[0],
                                r)["senders"][0];
  EXPECT_NE(s["why_not_held"].get<std::string>().find("completions came slower"),
            std::string::npos);
  // Above the rate: the pacer let more through.
  r.bytes = 375'000'000;  // 0.75 Gbit/s
  s = case_traffic::pacing_json(suite.tests[0].settings, "h1", inv.hosts[1].nics[0],
                                r)["senders"][0];
  EXPECT_EQ(s["why_not_held"], "reached 150% of the rate asked: the token bucket let more through");
}

TEST(CasePacing, PerftestsReachedRateIsItsOwnAverage) {
  const auto inv = fabric();
  const auto suite =
      suite_of("  - name: h\n    workload: bw\n    engine: perftest\n    rate: 40%\n");
  agent::PerftestResultsEvent r;
  r.report = perftest::Report{};
  r.report->bw = perftest::BwRow{};
  r.report->bw->average_gbps = 0.39;
  const auto j =
      case_traffic::perftest_pacing_json(suite.tests[0].settings, "h1", inv.hosts[1].nics[0], &r);
  EXPECT_EQ(j["senders"][0]["method"], "perftest");
  EXPECT_DOUBLE_EQ(j["senders"][0]["reached_bps"].get<double>(), 0.39e9);
  const auto failed = case_traffic::perftest_pacing_json(suite.tests[0].settings, "h1",
                                                         inv.hosts[1].nics[0], nullptr);
  EXPECT_FALSE(failed["senders"][0].contains("reached_bps"));
}

}  // namespace
}  // namespace rocehil::run
