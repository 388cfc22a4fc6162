// parse_text on real perftest stdout (tests/data/SOURCES.md says where each file came from).

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "perftest_fixture.hpp"
#include "rocehil/perftest/report.hpp"

namespace pt = rocehil::perftest;

namespace {

using rocehil::perftest::testing::fixture;

pt::Report parsed_fixture(const std::string& name) {
  const pt::ParseResult r = pt::parse_text(fixture(name));
  EXPECT_TRUE(r.report.has_value()) << name << ": " << r.error;
  EXPECT_EQ(r.error, "") << name;
  return r.report.value_or(pt::Report{});
}

// perftest's MB/sec is MiB/s.
double mib(double v) {
  return v * 1048576.0 * 8.0 / 1e9;
}

}  // namespace

TEST(ParseText, WriteBwGbpsWithWarningBeforeRow) {
  const pt::Report r = parsed_fixture("write_bw_gbps_cx7.txt");
  EXPECT_EQ(r.layout, "perftest stdout table (Gb/sec)");
  EXPECT_EQ(r.test, "RDMA_Write BW Test");
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

TEST(ParseText, ReadBwGbps) {
  const pt::Report r = parsed_fixture("read_bw_gbps_cx7.txt");
  EXPECT_EQ(r.test, "RDMA_Read BW Test");
  ASSERT_TRUE(r.bw);
  EXPECT_EQ(r.bw->bytes, 65536u);
  EXPECT_EQ(r.bw->iterations, 1000u);
  EXPECT_DOUBLE_EQ(r.bw->peak_gbps.value_or(-1), 328.64);
  EXPECT_DOUBLE_EQ(r.bw->average_gbps, 328.61);
  EXPECT_DOUBLE_EQ(r.bw->msg_rate_mpps, 0.626777);
}

TEST(ParseText, SendBwMibPerSecConvertedToGbps) {
  const pt::Report r = parsed_fixture("send_bw_mib_cx7.txt");
  EXPECT_EQ(r.layout, "perftest stdout table (MB/sec)");
  EXPECT_EQ(r.test, "Send BW Test");
  ASSERT_TRUE(r.bw);
  EXPECT_EQ(r.bw->bytes, 65536u);
  EXPECT_EQ(r.bw->iterations, 1000u);
  EXPECT_DOUBLE_EQ(r.bw->peak_gbps.value_or(-1), mib(46567.34));
  EXPECT_DOUBLE_EQ(r.bw->average_gbps, mib(46557.03));
  EXPECT_NEAR(r.bw->average_gbps, 390.55, 0.01);  // 46557.03 * 2^20 * 8 / 1e9
  EXPECT_DOUBLE_EQ(r.bw->msg_rate_mpps, 0.744912);
}

TEST(ParseText, WriteBwDurationMbPerSecOlderBanner) {
  const pt::Report r = parsed_fixture("write_bw_duration_mb_rdmacm.txt");
  EXPECT_EQ(r.layout, "perftest stdout table (MB/sec)");
  EXPECT_EQ(r.link_type, "Ethernet");
  EXPECT_EQ(r.mtu, 1024u);
  ASSERT_TRUE(r.bw);
  EXPECT_EQ(r.bw->iterations, 24777100u);
  EXPECT_FALSE(r.bw->peak_gbps.has_value());  // "BW peak 0.00": not measured
  EXPECT_DOUBLE_EQ(r.bw->average_gbps, mib(10322.23));
  EXPECT_DOUBLE_EQ(r.bw->msg_rate_mpps, 0.165156);
}

TEST(ParseText, SendBwUdAllSizesTakesTheLastRow) {
  const pt::Report r = parsed_fixture("send_bw_ud_all_mb.txt");
  EXPECT_EQ(r.connection, "UD");
  EXPECT_EQ(r.mtu, 4096u);
  ASSERT_TRUE(r.bw);
  EXPECT_EQ(r.bw->bytes, 4096u);
  EXPECT_EQ(r.bw->iterations, 1000u);
  EXPECT_DOUBLE_EQ(r.bw->peak_gbps.value_or(-1), mib(7301.40));
  EXPECT_DOUBLE_EQ(r.bw->average_gbps, mib(6170.13));
  EXPECT_DOUBLE_EQ(r.bw->msg_rate_mpps, 1.579554);
}

TEST(ParseText, BidirectionalFourQps) {
  const pt::Report r = parsed_fixture("write_bw_bidir_q4_all_ionic.txt");
  EXPECT_EQ(r.test, "RDMA_Write Bidirectional BW Test");
  EXPECT_EQ(r.device, "ionic_1");
  EXPECT_EQ(r.qps, 4u);
  EXPECT_EQ(r.link_type, "Ethernet");
  ASSERT_TRUE(r.bw);
  EXPECT_EQ(r.bw->bytes, 8388608u);
  EXPECT_EQ(r.bw->iterations, 20000u);
  EXPECT_DOUBLE_EQ(r.bw->peak_gbps.value_or(-1), 779.21);
  EXPECT_DOUBLE_EQ(r.bw->average_gbps, 779.21);
  EXPECT_DOUBLE_EQ(r.bw->msg_rate_mpps, 0.011611);
}

TEST(ParseText, PostListWithoutLeadingDashes) {
  const pt::Report r = parsed_fixture("write_bw_postlist_issue273.txt");
  EXPECT_EQ(r.test, "RDMA_Write Post List BW Test");
  EXPECT_EQ(r.device, "ib0");
  ASSERT_TRUE(r.bw);
  EXPECT_EQ(r.bw->bytes, 8u);
  EXPECT_EQ(r.bw->iterations, 224958464u);
  EXPECT_FALSE(r.bw->peak_gbps.has_value());  // "BW peak 0.00": not measured
  EXPECT_DOUBLE_EQ(r.bw->average_gbps, 0.48);
  EXPECT_DOUBLE_EQ(r.bw->msg_rate_mpps, 7.498617);
}

TEST(ParseText, SendLatRcEveryColumn) {
  const pt::Report r = parsed_fixture("send_lat_rc_cx7.txt");
  EXPECT_EQ(r.layout, "perftest stdout table (latency)");
  EXPECT_EQ(r.test, "Send Latency Test");
  EXPECT_EQ(r.connection, "RC");
  EXPECT_FALSE(r.bw);
  ASSERT_TRUE(r.lat);
  EXPECT_EQ(r.lat->bytes, 2u);
  EXPECT_EQ(r.lat->iterations, 1000u);
  EXPECT_EQ(r.lat->min_us, 1.24);
  EXPECT_EQ(r.lat->max_us, 5.19);
  EXPECT_EQ(r.lat->typical_us, 1.27);
  EXPECT_EQ(r.lat->avg_us, 1.27);
  EXPECT_EQ(r.lat->stdev_us, 0.00);
  EXPECT_EQ(r.lat->p99_us, 1.37);
  EXPECT_EQ(r.lat->p999_us, 5.19);
  EXPECT_FALSE(r.lat->tps);
}

TEST(ParseText, SendLatUdAllSizes) {
  const pt::Report r = parsed_fixture("send_lat_ud_all.txt");
  EXPECT_EQ(r.connection, "UD");
  ASSERT_TRUE(r.lat);
  EXPECT_EQ(r.lat->bytes, 4096u);
  EXPECT_EQ(r.lat->typical_us, 3.73);
  EXPECT_EQ(r.lat->p99_us, 5.04);
  EXPECT_EQ(r.lat->p999_us, 7.95);
}

TEST(ParseText, ReadAndWriteLatOlderBanner) {
  const pt::Report read = parsed_fixture("read_lat_rdmacm.txt");
  EXPECT_EQ(read.test, "RDMA_Read Latency Test");
  ASSERT_TRUE(read.lat);
  EXPECT_EQ(read.lat->typical_us, 1.48);
  EXPECT_EQ(read.lat->avg_us, 1.49);
  EXPECT_EQ(read.lat->p99_us, 1.56);
  EXPECT_EQ(read.lat->p999_us, 2.93);
  const pt::Report write = parsed_fixture("write_lat_rdmacm.txt");
  EXPECT_EQ(write.test, "RDMA_Write Latency Test");
  ASSERT_TRUE(write.lat);
  EXPECT_EQ(write.lat->min_us, 0.76);
  EXPECT_EQ(write.lat->typical_us, 0.78);
  EXPECT_EQ(write.lat->p999_us, 0.95);
}

TEST(ParseText, LatencyDuration) {
  const pt::Report r = parsed_fixture("write_lat_duration_rdmacm.txt");
  EXPECT_EQ(r.layout, "perftest stdout table (latency, duration)");
  ASSERT_TRUE(r.lat);
  EXPECT_EQ(r.lat->bytes, 2u);
  EXPECT_EQ(r.lat->iterations, 58732912u);
  EXPECT_EQ(r.lat->avg_us, 1.28);
  EXPECT_EQ(r.lat->tps, 391518.70);
  EXPECT_FALSE(r.lat->typical_us);
  EXPECT_FALSE(r.lat->p99_us);
  const pt::Report read = parsed_fixture("read_lat_duration_rdmacm.txt");
  ASSERT_TRUE(read.lat);
  EXPECT_EQ(read.lat->iterations, 62078352u);
  EXPECT_EQ(read.lat->avg_us, 2.42);
  EXPECT_EQ(read.lat->tps, 413812.77);
}

TEST(ParseText, CrlfReadsTheSame) {
  std::string text = fixture("send_lat_rc_cx7.txt");
  std::string crlf;
  for (const char c : text) crlf += c == '\n' ? std::string("\r\n") : std::string(1, c);
  const pt::ParseResult r = pt::parse_text(crlf);
  ASSERT_TRUE(r.report) << r.error;
  EXPECT_EQ(r.report->device, "mlx5_0");
  ASSERT_TRUE(r.report->lat);
  EXPECT_EQ(r.report->lat->p999_us, 5.19);
}

// Variants perftest prints with other options: per-port (--report-per-port) and QoS (raw_qos)
// tables, written from the REPORT_FMT_PER_PORT / REPORT_FMT_QOS formats.
TEST(ParseText, PerPortTableTakesTheFirstFiveColumns) {
  const pt::ParseResult r = pt::parse_text(
      " #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]   BW "
      "Port1[Gb/sec]   MsgRate Port1[Mpps]   BW Port2[Gb/sec]   MsgRate Port2[Mpps]\n"
      " 65536      5000           90.10            90.00\t\t   0.171661        45.00            "
      "0.085830              45.00            0.085830\n");
  ASSERT_TRUE(r.report) << r.error;
  ASSERT_TRUE(r.report->bw);
  EXPECT_DOUBLE_EQ(r.report->bw->peak_gbps.value_or(-1), 90.10);
  EXPECT_DOUBLE_EQ(r.report->bw->average_gbps, 90.00);
  EXPECT_DOUBLE_EQ(r.report->bw->msg_rate_mpps, 0.171661);
}

TEST(ParseText, QosTableSkipsTheServiceLevel) {
  const pt::ParseResult r = pt::parse_text(
      " #bytes    #sl      #iterations    BW peak[MB/sec]    BW average[MB/sec]   MsgRate[Mpps]\n"
      " 1024    3           1000           100.00            90.00                  0.092160\n");
  ASSERT_TRUE(r.report) << r.error;
  ASSERT_TRUE(r.report->bw);
  EXPECT_EQ(r.report->bw->bytes, 1024u);
  EXPECT_EQ(r.report->bw->iterations, 1000u);
  EXPECT_DOUBLE_EQ(r.report->bw->average_gbps, mib(90.00));
}

TEST(ParseText, RejectsEmptyInput) {
  const pt::ParseResult r = pt::parse_text(" \n\t\r\n");
  EXPECT_FALSE(r.report);
  EXPECT_EQ(r.error, "empty output: perftest printed nothing");
}

TEST(ParseText, RejectsGarbage) {
  const pt::ParseResult r = pt::parse_text("hello\nworld 1 2 3\n");
  EXPECT_FALSE(r.report);
  EXPECT_EQ(r.error, "no perftest result table (no '#bytes #iterations' header) in the output");
}

TEST(ParseText, RejectsHeaderWithoutRow) {
  std::string text = fixture("write_bw_gbps_cx7.txt");
  text = text.substr(0, text.find(" 65536      5000"));
  const pt::ParseResult r = pt::parse_text(text);
  EXPECT_FALSE(r.report);
  EXPECT_EQ(r.error, "no result row after the '#bytes' header: the run stopped before reporting");
}

TEST(ParseText, RejectsTruncatedRow) {
  std::string text = fixture("write_bw_gbps_cx7.txt");
  text = text.substr(0, text.find("392.38") + 6);
  const pt::ParseResult r = pt::parse_text(text);
  EXPECT_FALSE(r.report);
  EXPECT_EQ(r.error,
            "truncated result row '65536      5000             392.38': 3 of the 5 columns its "
            "header names");
}

TEST(ParseText, RejectsNanInRow) {
  const pt::ParseResult r = pt::parse_text(
      " #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]\n"
      " 65536      5000             -nan             392.34 \t\t     0.748336\n");
  EXPECT_FALSE(r.report);
  EXPECT_NE(r.error.find("'-nan' is not a finite non-negative number"), std::string::npos)
      << r.error;
}

TEST(ParseText, ErrorOutputSaysWhatPerftestSaid) {
  const pt::ParseResult r = pt::parse_text(fixture("error_no_device_write_bw.txt"));
  EXPECT_FALSE(r.report);
  EXPECT_EQ(r.error,
            "no perftest result table (no '#bytes #iterations' header) in the output; perftest "
            "said: Did not detect devices; Unable to find the Infiniband/RoCE device");
}
