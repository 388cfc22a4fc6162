// `parts:`: several kinds of traffic in one case, each with its own keys, and their metrics named
// by part in thresholds. What a part cannot be, or a threshold cannot name, is refused at its
// place.
#include <gtest/gtest.h>

#include "rocehil/suites/suite.hpp"
#include "suite_errors.hpp"

namespace rocehil::suites {
namespace {

constexpr std::string_view parts_head = "schema_version: 1\nname: x\ntests:\n";

Suite parts_loaded(std::string_view tests) {
  const SuiteLoadResult r = parse_suite(std::string(parts_head) + std::string(tests), "s.yaml");
  EXPECT_TRUE(r.suite) << (r.diagnostics.empty() ? "" : inventory::to_string(r.diagnostics[0]));
  return r.suite.value_or(Suite{});
}

std::vector<std::string> parts_refused(std::string_view tests) {
  return testing::errors_of(std::string(parts_head) + std::string(tests));
}

constexpr std::string_view two_parts =
    "  - name: mix\n"
    "    duration_s: 4\n"
    "    parts:\n"
    "      - {name: roce, workload: incast, hosts: 'h1,h2,h3', traffic_class: 106, qps: 4}\n"
    "      - {name: pair, workload: bw, hosts: 'h4,h5', traffic_class: 98, start_after_s: 1}\n"
    "    thresholds: [roce.busbw_gbps > 0, pair.busbw_gbps > 0, 'pair.errors == 0']\n";

TEST(Parts, EachPartIsAWorkloadWithTheTestsSettingsUnderItsOwn) {
  const Suite s = parts_loaded(two_parts);
  ASSERT_EQ(s.tests.size(), 1u);
  const SuiteTest& t = s.tests[0];
  EXPECT_EQ(t.workload, parts_workload);
  ASSERT_EQ(t.parts.size(), 2u);
  EXPECT_EQ(t.parts[0].name, "roce");
  EXPECT_EQ(t.parts[0].workload, "incast");
  EXPECT_EQ(t.parts[0].settings.qps, std::vector<std::uint32_t>{4});
  EXPECT_EQ(t.parts[0].settings.duration_s, 4);  // the test's
  EXPECT_EQ(t.parts[1].settings.hosts, "h4,h5");
  EXPECT_EQ(t.parts[1].settings.traffic_classes, std::vector<int>{98});
  EXPECT_EQ(t.parts[1].start_after_s, 1);
  EXPECT_EQ(t.parts[1].settings.qps, std::vector<std::uint32_t>{1});  // the default
  ASSERT_EQ(t.thresholds.size(), 3u);
  EXPECT_EQ(t.thresholds[0].metric.part, "roce");
  EXPECT_EQ(t.thresholds[0].metric.key(), "roce.busbw_gbps");
  // One case, named by the test alone.
  const auto cases = expand(s);
  ASSERT_EQ(cases.size(), 1u);
  EXPECT_EQ(cases[0].id, "mix");
  const SuiteTest pair = test_of_part(t, t.parts[1]);
  EXPECT_EQ(pair.name, "mix/pair");
  EXPECT_EQ(pair.workload, "bw");
  EXPECT_TRUE(pair.thresholds.empty());
}

TEST(Parts, ThresholdsNameAPartTheTestHasAndAMetricItsWorkloadGives) {
  const auto errors = parts_refused(
      "  - name: mix\n"
      "    parts:\n"
      "      - {name: roce, workload: incast, hosts: 'h1,h2,h3'}\n"
      "      - {name: ping, workload: lat, hosts: 'h4,h5'}\n"
      "    thresholds:\n"
      "      - rcoe.busbw_gbps > 0\n"
      "      - ping.busbw_gbps > 0\n"
      "      - busbw_gbps > 0\n"
      "      - roce.nic_rx_pause[3] == 0\n"
      "      - roce.data_errors == 0\n"
      "      - roce.cnp_per_s >= 0\n"
      "      - ping.lat_p99_us < 100\n"
      "      - nic_rx_pause[3] == 0\n");
  const std::vector<std::string> expected = {
      "s.yaml:9:9: test 'mix': threshold 'rcoe.busbw_gbps > 0': the test has no part 'rcoe'; its "
      "parts: roce, ping",
      "s.yaml:10:9: test 'mix': threshold 'ping.busbw_gbps > 0': part 'ping' (workload lat) never "
      "measures busbw_gbps; it measures lat_p50_us, lat_p99_us, lat_max_us, lat_avg_us, errors, "
      "retransmits, "
      "timeouts, naks, cnps, cnp_per_s",
      "s.yaml:11:9: test 'mix': threshold 'busbw_gbps > 0': in a test with parts, busbw_gbps is "
      "each part's: name the part, as in roce.busbw_gbps (its parts: roce, ping)",
      "s.yaml:12:9: test 'mix': threshold 'roce.nic_rx_pause[3] == 0': part 'roce' (workload "
      "incast) never measures nic_rx_pause; it measures busbw_gbps, algbw_gbps, time_us, "
      "time_p99_us, time_cv, fairness_jain, rate_deviation, errors, retransmits, timeouts, naks, "
      "cnps, cnp_per_s. nic_rx_pause is "
      "the whole case's (the captures, NICs and switches count it): name it without a part",
      "s.yaml:13:9: test 'mix': threshold 'roce.data_errors == 0': part 'roce' (workload incast) "
      "never measures data_errors; it measures busbw_gbps, algbw_gbps, time_us, time_p99_us, "
      "time_cv, fairness_jain, rate_deviation, errors, retransmits, timeouts, naks, cnps, "
      "cnp_per_s"};
  EXPECT_EQ(errors, expected);
  // Fairness between parts is the case's when two parts or more are bw senders (the plan's
  // "rank0 and rank1 fair"); with one, it is each part's, among its QPs.
  const Suite ranks = parts_loaded(
      "  - name: ranks\n"
      "    parts:\n"
      "      - {name: rank0, workload: bw, hosts: 'h1,h3'}\n"
      "      - {name: rank1, workload: bw, hosts: 'h2,h3'}\n"
      "    thresholds: [rate_deviation < 0.3, fairness_jain > 0.9]\n");
  ASSERT_EQ(ranks.tests.size(), 1u);
  EXPECT_EQ(ranks.tests[0].thresholds[0].metric.key(), "rate_deviation");
  EXPECT_EQ(parts_refused("  - name: one\n"
                          "    parts:\n"
                          "      - {name: rank0, workload: bw, hosts: 'h1,h3'}\n"
                          "      - {name: ping, workload: lat, hosts: 'h2,h3'}\n"
                          "    thresholds: [rate_deviation < 0.3]\n"),
            std::vector<std::string>{
                "s.yaml:8:18: test 'one': threshold 'rate_deviation < 0.3': in a test with "
                "parts, rate_deviation is each part's: name the part, as in "
                "rank0.rate_deviation (its parts: rank0, ping)"});
  // The left side is this run's: baseline.<metric> is not a part.
  const auto baseline = parts_refused(
      "  - name: mix\n    parts: [{name: roce, workload: incast}]\n"
      "    thresholds: ['baseline.busbw_gbps > 0']\n");
  ASSERT_EQ(baseline.size(), 1u);
  EXPECT_NE(baseline[0].find("baseline.<metric> belongs in the expression"), std::string::npos)
      << baseline[0];
}

TEST(Parts, WhatAPartCannotBeIsRefusedAtItsPlace) {
  const auto errors = parts_refused(
      "  - name: mix\n"
      "    workload: bw\n"
      "    size: [64K, 1M]\n"
      "    parts:\n"
      "      - {name: roce, workload: calibrate_bw}\n"
      "      - {name: 2nd, workload: bw}\n"
      "      - {name: a, workload: bw, qps: [1, 2], captures: [cap1]}\n"
      "      - {name: a, workload: bw}\n"
      "      - {workload: bw}\n");
  const std::vector<std::string> expected = {
      "s.yaml:5:15: test 'mix': a test with parts gives each part its workload; drop the test's "
      "workload",
      "s.yaml:6:11: test 'mix': size sweeps 2 values; a test with parts runs one case; give it "
      "one value (a test per value sweeps)",
      "s.yaml:8:32: test 'mix': part 'roce': workload 'calibrate_bw' cannot be a part; use bw, "
      "lat, iperf3 or a collective pattern (a calibration runs alone)",
      "s.yaml:9:16: test 'mix': part name '2nd' may hold letters, digits and _ only, a letter "
      "first (it names the part's metrics: roce.busbw_gbps)",
      "s.yaml:10:38: test 'mix': part 'a': qps sweeps 2 values; a part takes one value (a test "
      "per value sweeps)",
      "s.yaml:10:46: unknown key 'captures' in test 'mix': a part; valid keys: name, workload, "
      "start_after_s, stagger_s, protocol, streams, hosts, provider, size, qps, strategy, "
      "placement, traffic_class, "
      "opcode, transport, memory, duration_s, iterations, warmup, pipeline, engine, mtu, "
      "tx_depth, sl, rate, bytes, ack_timeout",
      "s.yaml:11:16: test 'mix': part 'a' is defined twice; give each part its own name",
      "s.yaml:12:9: test 'mix': a part has no 'name'; add one, e.g. 'name: roce'"};
  std::vector<std::string> got;
  for (const auto& e : errors) got.push_back(e.substr(0, e.find(" (did you mean")));
  EXPECT_EQ(got, expected);
  EXPECT_EQ(parts_refused("  - name: mix\n    parts: []\n").size(), 1u);
}

}  // namespace
}  // namespace rocehil::suites
