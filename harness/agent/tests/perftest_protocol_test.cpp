// The perftest messages of the agent protocol: what a request may ask for (checked with the same
// rules the agent's command builder applies), and the results coming back intact.
#include <gtest/gtest.h>

#include <string>

#include "rocehil/agent/protocol.hpp"

namespace rocehil::agent {
namespace {

std::string request_error(const std::string& fields) {
  return parse_request(R"({"v":1,"op":"perftest",)" + fields + "}").error;
}

TEST(AgentProtocolPerftest, ARequestRoundTripsWithEveryField) {
  PerftestRequest p;
  p.role = Role::client;
  p.tool = "send_bw";
  p.device = "mlx5_1";
  p.port = 2;
  p.gid_index = 3;
  p.size = 4096;
  p.qps = 8;
  p.tx_depth = 128;
  p.seconds = 5;
  p.mtu = 4096;
  p.traffic_class = 106;
  p.bidirectional = true;
  p.transport = traffic::QpType::ud;
  p.server = "198.18.1.2";
  p.tcp_port = 40000;
  p.timeout_s = 90;
  const std::string line = to_json_line(Request{7, p});
  const ParsedRequest parsed = parse_request(line);
  ASSERT_EQ(parsed.error, "") << line;
  const auto& back = std::get<PerftestRequest>(parsed.request->body);
  EXPECT_EQ(back.tool, "send_bw");
  EXPECT_EQ(back.device, "mlx5_1");
  EXPECT_EQ(back.port, 2);
  EXPECT_EQ(back.gid_index, 3);
  EXPECT_EQ(back.size, 4096u);
  EXPECT_EQ(back.qps, 8u);
  EXPECT_EQ(back.tx_depth, 128u);
  EXPECT_EQ(back.seconds, 5u);
  EXPECT_EQ(back.mtu, 4096u);
  EXPECT_EQ(back.traffic_class, 106);
  EXPECT_TRUE(back.bidirectional);
  EXPECT_EQ(back.transport, traffic::QpType::ud);
  EXPECT_EQ(back.server, "198.18.1.2");
  EXPECT_EQ(back.tcp_port, 40000);
  EXPECT_EQ(back.timeout_s, 90);
  EXPECT_EQ(to_json_line(*parsed.request), line);
}

TEST(AgentProtocolPerftest, RequestsPerftestWouldRefuseAreRefusedWithTheReason) {
  EXPECT_EQ(request_error(R"("role":"client","tool":"write_bw")"),
            "perftest: role \"client\" needs fields 'server' and 'tcp_port': where the server side "
            "listens (its perftest_listening reply)");
  EXPECT_EQ(request_error(R"("role":"server","tool":"write_bw","server":"10.0.0.1")"),
            "perftest: role \"server\" takes no 'server': it listens for the client");
  EXPECT_EQ(request_error(R"("role":"server","tool":"atomic_bw")"),
            "perftest: field 'tool' must be one of \"write_bw\", \"read_bw\", \"send_bw\", "
            "\"write_lat\", \"read_lat\" or \"send_lat\", got \"atomic_bw\"");
  EXPECT_NE(request_error(R"("role":"server","tool":"send_lat","qps":2)").find("use qps 1"),
            std::string::npos);
  EXPECT_NE(request_error(R"("role":"client","tool":"write_bw","server":"2001:db8::2",)"
                          R"("tcp_port":1)")
                .find("IPv4 only"),
            std::string::npos);
  EXPECT_NE(request_error(R"("role":"server","tool":"write_bw","transport":"ud")")
                .find("only SEND runs on UD"),
            std::string::npos);
  EXPECT_NE(request_error(R"("role":"server","tool":"write_bw","device":"-d")").find("device"),
            std::string::npos);
  EXPECT_NE(request_error(R"("role":"server","tool":"write_bw","server":"h1;reboot")")
                .find("IPv4 or IPv6 address"),
            std::string::npos);
  EXPECT_NE(request_error(R"("role":"server","tool":"write_bw","seconds":2,"iterations":100)")
                .find("not both"),
            std::string::npos);
}

PerftestResultsEvent bw_results() {
  PerftestResultsEvent r;
  r.role = Role::client;
  r.tool = "write_bw";
  r.command = {"ib_write_bw", "-d", "mlx5_0", "-p", "40000", "--report_gbits", "198.18.1.2"};
  r.version = "6.06";
  r.exit_code = 0;
  r.seconds = 7.5;
  perftest::Report report;
  report.layout = "perftest --out_json file";
  report.test = "RDMA_Write_BW_Test";
  report.device = "mlx5_0";
  report.connection = "RC";
  report.link_type = "Ethernet";
  report.qps = 8;
  report.mtu = 4096;
  report.bw = perftest::BwRow{65536, 5000, 92.31, 92.29, 0.176030};
  r.report = report;
  r.output = "table\n";
  return r;
}

TEST(AgentProtocolPerftest, ResultsRoundTripWithTheReportAndWithoutOne) {
  const std::string line = to_json_line(Reply{2, bw_results()});
  const ParsedReply parsed = parse_reply(line);
  ASSERT_EQ(parsed.error, "") << line;
  const auto& back = std::get<PerftestResultsEvent>(parsed.reply->body);
  EXPECT_EQ(back.command.front(), "ib_write_bw");
  EXPECT_EQ(back.version, "6.06");
  ASSERT_TRUE(back.report && back.report->bw);
  EXPECT_EQ(back.report->bw->average_gbps, 92.29);
  EXPECT_EQ(back.report->bw->msg_rate_mpps, 0.176030);
  EXPECT_EQ(back.report->qps, 8u);
  EXPECT_FALSE(back.report->lat);
  EXPECT_EQ(to_json_line(*parsed.reply), line);

  PerftestResultsEvent failed = bw_results();
  failed.report.reset();
  failed.exit_code = 1;
  failed.error = "Did not detect devices";
  const ParsedReply f = parse_reply(to_json_line(Reply{2, failed}));
  ASSERT_EQ(f.error, "");
  EXPECT_FALSE(std::get<PerftestResultsEvent>(f.reply->body).report);
  EXPECT_EQ(std::get<PerftestResultsEvent>(f.reply->body).error, "Did not detect devices");
}

TEST(AgentProtocolPerftest, ADurationLatencyRowKeepsItsMissingColumnsAbsent) {
  PerftestResultsEvent r = bw_results();
  r.tool = "write_lat";
  r.report->bw.reset();
  perftest::LatRow lat;
  lat.bytes = 2;
  lat.iterations = 112345;
  lat.avg_us = 1.71;
  lat.tps = 584005.2;
  r.report->lat = lat;
  const ParsedReply parsed = parse_reply(to_json_line(Reply{2, r}));
  ASSERT_EQ(parsed.error, "");
  const perftest::LatRow& back = *std::get<PerftestResultsEvent>(parsed.reply->body).report->lat;
  EXPECT_EQ(back.avg_us, 1.71);
  EXPECT_EQ(back.tps, 584005.2);
  EXPECT_FALSE(back.typical_us);  // not a 0
  EXPECT_FALSE(back.p99_us);
}

TEST(AgentProtocolPerftest, APeakPerftestDidNotMeasureStaysAbsentOnTheWire) {
  PerftestResultsEvent r = bw_results();
  ASSERT_TRUE(r.report->bw->peak_gbps);
  const auto with_peak = parse_reply(to_json_line(Reply{2, r}));
  ASSERT_EQ(with_peak.error, "");
  EXPECT_EQ(std::get<PerftestResultsEvent>(with_peak.reply->body).report->bw->peak_gbps,
            r.report->bw->peak_gbps);
  r.report->bw->peak_gbps.reset();
  const std::string line = to_json_line(Reply{2, r});
  EXPECT_EQ(line.find("peak_gbps"), std::string::npos) << line;
  const ParsedReply parsed = parse_reply(line);
  ASSERT_EQ(parsed.error, "");
  EXPECT_FALSE(std::get<PerftestResultsEvent>(parsed.reply->body).report->bw->peak_gbps);
}

TEST(AgentProtocolPerftest, AReportWithBothOrNeitherRowIsRefused) {
  PerftestResultsEvent r = bw_results();
  r.report->lat = perftest::LatRow{};
  EXPECT_EQ(parse_reply(to_json_line(Reply{2, r})).error,
            "perftest_results: report must have exactly one of 'bw' and 'lat'");
  r.report->lat.reset();
  r.report->bw.reset();
  EXPECT_EQ(parse_reply(to_json_line(Reply{2, r})).error,
            "perftest_results: report must have exactly one of 'bw' and 'lat'");
}

TEST(AgentProtocolPerftest, TheListeningReplyNeedsAPort) {
  EXPECT_EQ(parse_reply(R"({"v":1,"op":"perftest_listening","tcp_port":0})").error,
            "perftest_listening: field 'tcp_port' must be an integer from 1 to 65535, got 0");
  const ParsedReply ok = parse_reply(R"({"v":1,"op":"perftest_listening","tcp_port":40000})");
  ASSERT_EQ(ok.error, "");
  EXPECT_EQ(std::get<PerftestListeningReply>(ok.reply->body).tcp_port, 40000);
}

}  // namespace
}  // namespace rocehil::agent
