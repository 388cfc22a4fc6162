// parse_json on --out_json files built from perftest's writer code (tests/data/SOURCES.md).

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "perftest_fixture.hpp"
#include "rocehil/perftest/report.hpp"

namespace pt = rocehil::perftest;

namespace {

using rocehil::perftest::testing::fixture;

pt::Report parsed_json(const std::string& text) {
  const pt::ParseResult r = pt::parse_json(text);
  EXPECT_TRUE(r.report.has_value()) << r.error;
  EXPECT_EQ(r.error, "");
  return r.report.value_or(pt::Report{});
}

}  // namespace

TEST(ParseJson, WriteBwV45BareKeysGbps) {
  const pt::Report r = parsed_json(fixture("write_bw_gbps_v4.5.json"));
  EXPECT_EQ(r.layout, "perftest --out_json file");
  EXPECT_EQ(r.test, "RDMA_Write_BW_Test");
  EXPECT_EQ(r.device, "mlx5_0");
  EXPECT_EQ(r.connection, "RC");
  EXPECT_EQ(r.link_type, "IB");
  EXPECT_EQ(r.qps, 1u);
  EXPECT_EQ(r.mtu, 4096u);
  ASSERT_TRUE(r.bw);
  EXPECT_FALSE(r.lat);
  EXPECT_EQ(r.bw->bytes, 65536u);
  EXPECT_EQ(r.bw->iterations, 5000u);
  EXPECT_DOUBLE_EQ(r.bw->peak_gbps.value_or(-1), 392.38);
  EXPECT_DOUBLE_EQ(r.bw->average_gbps, 392.34);
  EXPECT_DOUBLE_EQ(r.bw->msg_rate_mpps, 0.748336);
}

TEST(ParseJson, MebibytesInferredFromMsgRate) {
  const pt::Report r = parsed_json(fixture("send_bw_ud_mb_v4.5.json"));
  EXPECT_EQ(r.connection, "UD");
  ASSERT_TRUE(r.bw);
  EXPECT_EQ(r.bw->bytes, 4096u);
  EXPECT_DOUBLE_EQ(r.bw->peak_gbps.value_or(-1), 7301.40 * 1048576.0 * 8.0 / 1e9);
  EXPECT_DOUBLE_EQ(r.bw->average_gbps, 6170.13 * 1048576.0 * 8.0 / 1e9);
  EXPECT_DOUBLE_EQ(r.bw->msg_rate_mpps, 1.579554);
}

TEST(ParseJson, SendLatV45DottedKey) {
  const pt::Report r = parsed_json(fixture("send_lat_rc_v4.5.json"));
  EXPECT_EQ(r.test, "Send_Latency_Test");
  ASSERT_TRUE(r.lat);
  EXPECT_FALSE(r.bw);
  EXPECT_EQ(r.lat->bytes, 2u);
  EXPECT_EQ(r.lat->iterations, 1000u);
  EXPECT_EQ(r.lat->min_us, 1.24);
  EXPECT_EQ(r.lat->max_us, 5.19);
  EXPECT_EQ(r.lat->typical_us, 1.27);
  EXPECT_EQ(r.lat->avg_us, 1.27);
  EXPECT_EQ(r.lat->stdev_us, 0.00);
  EXPECT_EQ(r.lat->p99_us, 1.37);
  EXPECT_EQ(r.lat->p999_us, 5.19);
}

TEST(ParseJson, LatencyDurationV45) {
  const pt::Report r = parsed_json(fixture("write_lat_duration_v4.5.json"));
  EXPECT_EQ(r.link_type, "Ethernet");
  EXPECT_EQ(r.mtu, 1024u);
  ASSERT_TRUE(r.lat);
  EXPECT_EQ(r.lat->iterations, 58732912u);
  EXPECT_EQ(r.lat->avg_us, 1.28);
  EXPECT_EQ(r.lat->tps, 391518.70);
  EXPECT_FALSE(r.lat->typical_us);
}

TEST(ParseJson, QuotedDialectSince2401) {
  const pt::Report r = parsed_json(fixture("send_lat_ud_head.json"));
  EXPECT_EQ(r.test, "Send_Latency_Test");
  EXPECT_EQ(r.connection, "UD");
  ASSERT_TRUE(r.lat);
  EXPECT_EQ(r.lat->bytes, 4096u);
  EXPECT_EQ(r.lat->typical_us, 3.73);
  EXPECT_EQ(r.lat->p99_us, 5.04);
  EXPECT_EQ(r.lat->p999_us, 7.95);
}

// REPORT_FMT_QOS_JSON (v4.5-0.17): a bare "sl" and a " MsgRate" with a leading space.
TEST(ParseJson, QosResults) {
  const pt::Report r = parsed_json(
      "{\ntest_info: {\ntest: RDMA_Write_BW_Test,\n},\nresults: {\nMsgSize: 1024,\nsl: 3,\n"
      "n_iterations: 1000,\nBW_peak: 0.80,\nBW_average: 0.75,\n MsgRate: 0.091553,\n},\n}\n");
  ASSERT_TRUE(r.bw);
  EXPECT_EQ(r.bw->iterations, 1000u);
  EXPECT_DOUBLE_EQ(r.bw->average_gbps, 0.75);
}

TEST(ParseJson, RejectsEmpty) {
  EXPECT_EQ(pt::parse_json("").error,
            "perftest --out_json file: empty file (perftest wrote no report)");
}

TEST(ParseJson, RejectsGarbage) {
  const pt::ParseResult r = pt::parse_json("hello world");
  EXPECT_FALSE(r.report);
  EXPECT_EQ(r.error, "perftest --out_json file: the file does not start with '{' (at line 1)");
}

TEST(ParseJson, RejectsTruncatedFile) {
  std::string text = fixture("write_bw_gbps_v4.5.json");
  text = text.substr(0, text.find("BW_average"));
  const pt::ParseResult r = pt::parse_json(text);
  EXPECT_FALSE(r.report);
  EXPECT_EQ(r.error,
            "perftest --out_json file: the file ends inside an object (truncated?) (at line 24)");
}

TEST(ParseJson, RejectsResultsWithoutANumber) {
  const pt::ParseResult r = pt::parse_json(
      "{\nresults: {\nMsgSize: 65536,\nn_iterations: 5000,\nBW_peak: 1.0,\nMsgRate: 0.1,\n},\n}\n");
  EXPECT_FALSE(r.report);
  EXPECT_EQ(r.error, "perftest --out_json file: results have no 'BW_average'");
}

TEST(ParseJson, RejectsNan) {
  const pt::ParseResult r = pt::parse_json(
      "{\nresults: {\nMsgSize: 2,\nn_iterations: 10,\nt_avg: -nan,\ntps_average: 1.0,\n},\n}\n");
  EXPECT_FALSE(r.report);
  EXPECT_EQ(
      r.error,
      "perftest --out_json file: results 't_avg' is not a finite non-negative number: '-nan'");
}

TEST(ParseJson, RejectsSingleNumberOutput) {
  // --output=bandwidth: write_bw_report_to_file writes "bw_avg: %lf," only.
  const pt::ParseResult r =
      pt::parse_json("{\ntest_info: {\n},\nresults: {\nbw_avg: 92.3,\n},\n}\n");
  EXPECT_FALSE(r.report);
  EXPECT_EQ(r.error,
            "perftest --out_json file: results hold one number only (a run with --output=...): no "
            "message size");
}

TEST(ParseJson, RejectsMissingResults) {
  const pt::ParseResult r = pt::parse_json("{\ntest_info: {\ntest: Send_BW_Test,\n},\n}\n");
  EXPECT_FALSE(r.report);
  EXPECT_EQ(r.error, "perftest --out_json file: no 'results' object");
}
