// iperf3_metrics and iperf3_failure on results holding real iperf3 3.12 reports
// (iperf/tests/data): the numbers are worked out here from the files' own fields.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "rocehil/iperf/report.hpp"
#include "rocehil/run/iperf3_pair.hpp"

namespace rocehil::run {
namespace {

iperf::Report iperf3_fixture(const std::string& name) {
  std::ifstream in(std::string(ROCEHIL_IPERF_DATA) + "/" + name);
  std::stringstream text;
  text << in.rdbuf();
  return iperf::parse_json(text.str()).report.value();
}

Iperf3PairResult pair_of(const std::string& client, const std::string& server) {
  Iperf3PairResult r;
  r.client.name = "h1";
  r.server.name = "h3";
  r.client.results = agent::Iperf3ResultsEvent{};
  r.client.results->report = iperf3_fixture(client);
  r.server.results = agent::Iperf3ResultsEvent{};
  r.server.results->role = agent::Role::server;
  if (!server.empty()) r.server.results->report = iperf3_fixture(server);
  return r;
}

TEST(Iperf3Metrics, UdpIsTheReceiversRateAndLossRatio) {
  const suites::Measured m =
      iperf3_metrics(pair_of("udp_200m_client.json", "udp_200m_server.json"));
  // The server's sum_received: 37713160 bytes over 2.00033 s (iperf3 prints the seconds to
  // 1 us and computes its bits_per_second from the exact time, hence the tolerance), 8478 of
  // 34523 datagrams lost.
  EXPECT_NEAR(m.values.at("iperf_gbps"), 37713160 * 8 / 2.00033 / 1e9, 1e-6);
  EXPECT_DOUBLE_EQ(m.values.at("iperf_loss_ratio"), 8478.0 / 34523.0);
  EXPECT_FALSE(m.values.contains("iperf_retransmits"));
  EXPECT_NE(m.unmeasured.at("iperf_retransmits").find("UDP"), std::string::npos);
  EXPECT_FALSE(iperf3_failure(pair_of("udp_200m_client.json", "udp_200m_server.json")));
}

TEST(Iperf3Metrics, TcpIsTheReceiversRateAndTheSendersRetransmits) {
  const suites::Measured m = iperf3_metrics(pair_of("tcp_2streams_shaped_client.json", ""));
  // Without the server's report, the client's copy of the receiver's sum.
  EXPECT_NEAR(m.values.at("iperf_gbps"), 0.09560933676219466, 1e-12);
  EXPECT_EQ(m.values.at("iperf_retransmits"), 1250);
  EXPECT_FALSE(m.values.contains("iperf_loss_ratio"));
  EXPECT_NE(m.unmeasured.at("iperf_loss_ratio").find("TCP"), std::string::npos);
}

TEST(Iperf3Metrics, AFailedRunMeasuresNothingAndSaysWhyInIperfsWords) {
  Iperf3PairResult r = pair_of("error_refused_client.json", "");
  r.client.results->error = r.client.results->report->error;
  const auto failure = iperf3_failure(r);
  ASSERT_TRUE(failure);
  EXPECT_EQ(failure->side, "h1");
  EXPECT_EQ(failure->message, "iperf3 on h1: unable to connect to server: Connection refused");
  const suites::Measured m = iperf3_metrics(r);
  EXPECT_TRUE(m.values.empty());
  for (const char* key : {"iperf_gbps", "iperf_loss_ratio", "iperf_retransmits"})
    EXPECT_NE(m.unmeasured.at(key).find("Connection refused"), std::string::npos) << key;
}

TEST(Iperf3Metrics, AServerThatNeverCameUpIsTheStory) {
  Iperf3PairResult r;
  r.client.name = "h1";
  r.server.name = "h3";
  r.server.results = agent::Iperf3ResultsEvent{};
  r.server.results->role = agent::Role::server;
  r.server.results->exit_code = 127;
  r.server.results->error = "iperf3 is not installed on this host (Debian: apt-get install iperf3)";
  const auto failure = iperf3_failure(r);
  ASSERT_TRUE(failure);
  EXPECT_EQ(failure->side, "h3");
  EXPECT_NE(failure->message.find("apt-get install iperf3"), std::string::npos);
}

TEST(Iperf3Json, RunJsonHoldsEachSidesRequestAndResults) {
  Iperf3PairConfig config;
  config.server.role = agent::Role::server;
  config.server.bind = "198.18.2.1";
  config.client.bind = "198.18.1.1";
  config.client.server = "198.18.2.1";
  config.client.port = 40000;
  const nlohmann::json j =
      iperf3_pair_json(config, pair_of("udp_200m_client.json", "udp_200m_server.json"));
  EXPECT_EQ(j.at("engine"), "iperf3");
  EXPECT_EQ(j.at("client").at("request").at("port"), 40000);
  EXPECT_EQ(j.at("server").at("results").at("report").at("received").at("lost_packets"), 8478);
  EXPECT_TRUE(j.at("failure").is_null());
}

}  // namespace
}  // namespace rocehil::run
