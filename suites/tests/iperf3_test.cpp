// workload iperf3 in a suite: its keys taken, every key it does not use refused at its place with
// why, UDP without a rate refused, and the metrics a threshold may name.
#include <gtest/gtest.h>

#include <string>

#include "rocehil/suites/measurable.hpp"
#include "rocehil/suites/metrics.hpp"
#include "rocehil/suites/suite.hpp"
#include "suite_errors.hpp"

namespace rocehil::suites {
namespace {

const std::string iperf3_head =
    "schema_version: 1\nname: x\ntests:\n  - name: bg\n    workload: iperf3\n";

Suite iperf3_loaded(const std::string& text) {
  const SuiteLoadResult r = parse_suite(text, "s.yaml");
  for (const auto& d : r.diagnostics) ADD_FAILURE() << inventory::to_string(d);
  return r.suite.value_or(Suite{});
}

TEST(Iperf3Suite, UdpWithRateClassStreamsAndDurationIsTaken) {
  const Suite s = iperf3_loaded(iperf3_head +
                                "    hosts: h1,h3\n    protocol: udp\n    rate: 200Mbit/s\n"
                                "    traffic_class: 40\n    streams: 2\n    duration_s: 3\n"
                                "    thresholds:\n      - iperf_gbps >= 0.18\n"
                                "      - iperf_loss_ratio < 0.01\n");
  ASSERT_EQ(s.tests.size(), 1u);
  const SuiteTest& t = s.tests[0];
  EXPECT_TRUE(is_point_to_point(t));
  EXPECT_EQ(t.settings.iperf3.protocol, "udp");
  EXPECT_EQ(t.settings.iperf3.streams, 2u);
  ASSERT_TRUE(t.settings.rate);
  EXPECT_DOUBLE_EQ(t.settings.rate->bits_per_s(1e9), 200e6);
  EXPECT_EQ(t.settings.traffic_classes, std::vector<int>{40});
  EXPECT_DOUBLE_EQ(t.settings.duration_s, 3);
  EXPECT_EQ(t.thresholds.size(), 2u);
  EXPECT_EQ(expand(s).size(), 1u);
}

TEST(Iperf3Suite, TcpIsTheDefaultAndItsClassIsZeroNotRoces) {
  const Suite s = iperf3_loaded(iperf3_head);
  const SuiteTest& t = s.tests.at(0);
  EXPECT_EQ(t.settings.iperf3.protocol, "tcp");
  EXPECT_EQ(t.settings.iperf3.streams, 1u);
  EXPECT_FALSE(t.settings.rate);
  // 106 (DSCP 26) is RoCE's lossless class; background traffic is not put there unasked.
  EXPECT_EQ(t.settings.traffic_classes, std::vector<int>{0});
}

TEST(Iperf3Suite, DefaultsMeantForRdmaTestsNeitherSweepNorRefuseIt) {
  const Suite s = iperf3_loaded(
      "schema_version: 1\nname: x\ndefaults:\n  size: [64K, 1M]\n  qps: [1, 8]\n"
      "  transport: ud\n  opcode: send\n  mtu: 4096\n  engine: perftest\n  traffic_class: 106\n"
      "tests:\n  - name: bg\n    workload: iperf3\n");
  const SuiteTest& t = s.tests.at(0);
  EXPECT_EQ(expand(s).size(), 1u);
  EXPECT_EQ(t.settings.transport, "rc");
  EXPECT_EQ(t.settings.engine, "iperf3");
  // A class the defaults wrote is a class asked for.
  EXPECT_EQ(t.settings.traffic_classes, std::vector<int>{106});
}

TEST(Iperf3Suite, EveryKeyItDoesNotUseIsRefusedAtItsPlaceWithWhy) {
  EXPECT_EQ(testing::errors_of(iperf3_head + "    qps: 8\n    size: 64K\n    provider: soft\n"),
            (std::vector<std::string>{
                "s.yaml:6:10: test 'bg': workload iperf3 does not take qps (iperf3 has no queue "
                "pairs; parallel connections are 'streams'); drop qps",
                "s.yaml:7:11: test 'bg': workload iperf3 does not take size (iperf3 sends a "
                "stream, not messages of a size); drop size",
                "s.yaml:8:15: test 'bg': workload iperf3 does not take provider (iperf3 uses the "
                "kernel's TCP/UDP, no RDMA provider); drop provider"}));
  for (const char* key :
       {"engine: perftest", "strategy: split", "placement: packed", "opcode: send", "transport: rc",
        "memory: host", "iterations: 5", "warmup: 1", "pipeline: 2", "rounds: 2", "mtu: 1024",
        "tx_depth: 8", "sl: 3"}) {
    SCOPED_TRACE(key);
    const auto errors = testing::errors_of(iperf3_head + "    " + key + "\n");
    ASSERT_EQ(errors.size(), 1u);
    EXPECT_NE(errors[0].find("workload iperf3 does not take"), std::string::npos) << errors[0];
  }
}

TEST(Iperf3Suite, UdpWithoutARateIsRefusedRatherThanSentAtOneMbit) {
  EXPECT_EQ(testing::errors_of(iperf3_head + "    protocol: udp\n"),
            std::vector<std::string>{
                "s.yaml:6:15: test 'bg': protocol udp needs a rate (iperf3 would send 1 Mbit/s "
                "unsaid); give rate, such as '200Mbit/s' or '10%'"});
}

TEST(Iperf3Suite, ItsKeysAreRefusedOnOtherWorkloadsAndBadValuesAtTheirPlace) {
  EXPECT_EQ(testing::errors_of("schema_version: 1\nname: x\ntests:\n  - name: b\n    workload: "
                               "bw\n    protocol: udp\n    streams: 2\n"),
            (std::vector<std::string>{
                "s.yaml:6:15: test 'b': protocol is a key of workload iperf3, not bw; drop "
                "protocol",
                "s.yaml:7:14: test 'b': streams is a key of workload iperf3, not bw; drop "
                "streams"}));
  const auto bad = testing::errors_of(iperf3_head + "    protocol: sctp\n    streams: 129\n");
  ASSERT_EQ(bad.size(), 2u);
  EXPECT_NE(bad[0].find("s.yaml:6:15: test 'bg': protocol"), std::string::npos) << bad[0];
  EXPECT_NE(bad[1].find("s.yaml:7:14: test 'bg': streams"), std::string::npos) << bad[1];
  // rate stays refused where nothing paces (lat, here): bw and iperf3 take it.
  const auto rate = testing::errors_of(
      "schema_version: 1\nname: x\ntests:\n  - name: b\n    workload: lat\n    rate: 10%\n");
  ASSERT_EQ(rate.size(), 1u);
  EXPECT_NE(rate[0].find("does not take rate"), std::string::npos) << rate[0];
}

TEST(Iperf3Suite, AThresholdOnWhatIperf3CannotGiveIsRefusedWithWhatItGives) {
  const auto tcp = testing::errors_of(iperf3_head +
                                      "    thresholds:\n      - iperf_loss_ratio < 0.01\n"
                                      "      - busbw_gbps > 1\n");
  ASSERT_EQ(tcp.size(), 2u);
  EXPECT_NE(tcp[0].find("workload iperf3 with protocol tcp never measures iperf_loss_ratio; "
                        "this test measures iperf_gbps, iperf_retransmits"),
            std::string::npos)
      << tcp[0];
  EXPECT_NE(tcp[1].find("never measures busbw_gbps"), std::string::npos) << tcp[1];
  const auto udp = testing::errors_of(iperf3_head +
                                      "    protocol: udp\n    rate: 1%\n    thresholds:\n"
                                      "      - iperf_retransmits == 0\n");
  ASSERT_EQ(udp.size(), 1u);
  EXPECT_NE(udp[0].find("this test measures iperf_gbps, iperf_loss_ratio"), std::string::npos)
      << udp[0];
  // And RDMA workloads never measure iperf3's metrics.
  const auto bw = testing::errors_of(
      "schema_version: 1\nname: x\ntests:\n  - name: b\n    workload: bw\n    thresholds:\n"
      "      - iperf_gbps > 1\n");
  ASSERT_EQ(bw.size(), 1u);
  EXPECT_NE(bw[0].find("never measures iperf_gbps"), std::string::npos) << bw[0];
}

TEST(Iperf3Suite, ItsMetricsAreKnownAndBandwidthIsBetterHigher) {
  for (const char* m : {"iperf_gbps", "iperf_loss_ratio", "iperf_retransmits"})
    EXPECT_NE(find_metric(m), nullptr) << m;
  EXPECT_EQ(better_when("iperf_gbps"), Better::higher);
  EXPECT_EQ(better_when("iperf_loss_ratio"), Better::lower);
  EXPECT_EQ(better_when("iperf_retransmits"), Better::lower);
}

}  // namespace
}  // namespace rocehil::suites
