// The iperf3 messages of the agent protocol: what a request may ask for (checked with the same
// rules the agent's command builder applies), and the results coming back intact.
#include <gtest/gtest.h>

#include <string>

#include "rocehil/agent/protocol.hpp"

namespace rocehil::agent {
namespace {

std::string iperf3_request_error(const std::string& fields) {
  return parse_request(R"({"v":1,"op":"iperf3",)" + fields + "}").error;
}

TEST(AgentProtocolIperf3, ARequestRoundTripsWithEveryField) {
  Iperf3Request p;
  p.role = Role::client;
  p.protocol = "udp";
  p.bind = "198.18.1.1";
  p.server = "198.18.2.1";
  p.port = 40000;
  p.seconds = 5;
  p.rate_bps = 200'000'000;
  p.tos = 40;
  p.streams = 4;
  p.at_ns = 1'700'000'000'000'000'000;
  p.timeout_s = 90;
  const std::string line = to_json_line(Request{7, p});
  const ParsedRequest parsed = parse_request(line);
  ASSERT_EQ(parsed.error, "") << line;
  const auto& back = std::get<Iperf3Request>(parsed.request->body);
  EXPECT_EQ(back.protocol, "udp");
  EXPECT_EQ(back.bind, "198.18.1.1");
  EXPECT_EQ(back.server, "198.18.2.1");
  EXPECT_EQ(back.port, 40000);
  EXPECT_EQ(back.seconds, 5u);
  EXPECT_EQ(back.rate_bps, 200'000'000u);
  EXPECT_EQ(back.tos, 40);
  EXPECT_EQ(back.streams, 4u);
  EXPECT_EQ(back.at_ns, 1'700'000'000'000'000'000);
  EXPECT_EQ(back.timeout_s, 90);
  EXPECT_EQ(to_json_line(*parsed.request), line);
  // The words the agent will run, from the checked fields alone.
  EXPECT_EQ(iperf::command_words(iperf3_options(back)),
            (std::vector<std::string>{"iperf3", "-c", "198.18.2.1", "--json", "-i", "0", "-B",
                                      "198.18.1.1", "-p", "40000", "-t", "5", "-u", "-b",
                                      "200000000", "-S", "40", "-P", "4"}));
}

TEST(AgentProtocolIperf3, MalformedRequestsAreRefusedWithTheReason) {
  EXPECT_EQ(iperf3_request_error(R"("role":"client","bind":"198.18.1.1")"),
            "iperf3: role \"client\" needs fields 'server' and 'port': where the server side "
            "listens (its iperf3_listening reply)");
  EXPECT_EQ(iperf3_request_error(R"("role":"server","bind":"198.18.2.1","server":"198.18.1.1")"),
            "iperf3: role \"server\" takes no 'server': it listens for the client");
  EXPECT_EQ(iperf3_request_error(R"("role":"server","bind":"198.18.2.1","port":5201)"),
            "iperf3: role \"server\" takes no 'port': its agent picks a free one");
  EXPECT_NE(iperf3_request_error(R"("role":"server","bind":"198.18.2.1","rate_bps":1000)")
                .find("takes no 'rate_bps', 'tos' or 'streams'"),
            std::string::npos);
  EXPECT_NE(iperf3_request_error(R"("role":"server","bind":"198.18.2.1","at_ns":5)").find("at_ns"),
            std::string::npos);
  const std::string client = R"("role":"client","bind":"198.18.1.1","server":"198.18.2.1",)"
                             R"("port":40000,)";
  // UDP without a rate: iperf3 would send 1 Mbit/s unsaid.
  EXPECT_NE(iperf3_request_error(client + R"("protocol":"udp")").find("1 Mbit/s"),
            std::string::npos);
  EXPECT_NE(iperf3_request_error(client + R"("protocol":"sctp")").find("field 'protocol'"),
            std::string::npos);
  EXPECT_NE(iperf3_request_error(client + R"("streams":129)").find("'streams'"), std::string::npos);
  EXPECT_NE(iperf3_request_error(client + R"("streams":0)").find("'streams'"), std::string::npos);
  EXPECT_NE(iperf3_request_error(client + R"("seconds":0)").find("'seconds'"), std::string::npos);
  EXPECT_NE(iperf3_request_error(client + R"("tos":256)").find("'tos'"), std::string::npos);
  EXPECT_NE(iperf3_request_error(client + R"("extra":1)").find("extra"), std::string::npos);
  // No word reaches iperf3 unchecked: addresses must be IP literals.
  EXPECT_NE(iperf3_request_error(R"("role":"client","bind":"198.18.1.1","server":"h2;reboot",)"
                                 R"("port":1)")
                .find("IPv4 or IPv6 address"),
            std::string::npos);
  EXPECT_NE(iperf3_request_error(R"("role":"server","bind":"-s")").find("IPv4 or IPv6 address"),
            std::string::npos);
  EXPECT_NE(iperf3_request_error(R"("role":"server")").find("'bind'"), std::string::npos);
}

Iperf3ResultsEvent udp_results() {
  Iperf3ResultsEvent r;
  r.role = Role::server;
  r.command = {"iperf3", "-s", "-1", "--json", "-i", "0", "-B", "198.18.2.1", "-p", "40000"};
  r.seconds = 3.2;
  iperf::Report report;
  report.version = "iperf 3.12";
  report.protocol = "UDP";
  report.streams = 1;
  report.tos = 40;
  report.duration_s = 2;
  report.target_bitrate = 200000000;
  report.received = iperf::Sum{2.0, 37713160, 150827753.4, std::nullopt, 34523, 8478, 0.009};
  report.sent = iperf::Sum{2.0, 0, 0, std::nullopt, 0, 0, 0};
  r.report = report;
  r.output = "{...}\n";
  return r;
}

TEST(AgentProtocolIperf3, ResultsRoundTripWithTheReportAndWithoutOne) {
  const std::string line = to_json_line(Reply{2, udp_results()});
  const ParsedReply parsed = parse_reply(line);
  ASSERT_EQ(parsed.error, "") << line;
  const auto& back = std::get<Iperf3ResultsEvent>(parsed.reply->body);
  EXPECT_EQ(back.role, Role::server);
  ASSERT_TRUE(back.report && back.report->received);
  EXPECT_EQ(back.report->received->lost_packets, 8478u);
  EXPECT_EQ(back.report->received->packets, 34523u);
  EXPECT_FALSE(back.report->received->retransmits);
  EXPECT_EQ(back.report->tos, 40);
  EXPECT_EQ(to_json_line(*parsed.reply), line);

  Iperf3ResultsEvent failed = udp_results();
  failed.report.reset();
  failed.exit_code = 127;
  failed.error = "iperf3 is not installed on this host (Debian: apt-get install iperf3)";
  const ParsedReply f = parse_reply(to_json_line(Reply{2, failed}));
  ASSERT_EQ(f.error, "");
  EXPECT_FALSE(std::get<Iperf3ResultsEvent>(f.reply->body).report);

  const ParsedReply listening = parse_reply(R"({"v":1,"op":"iperf3_listening","port":0})");
  EXPECT_NE(listening.error.find("'port'"), std::string::npos) << listening.error;
}

}  // namespace
}  // namespace rocehil::agent
