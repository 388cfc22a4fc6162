// parse_json on real iperf3 3.12 outputs (tests/data/SOURCES.md says how each was made). The
// expected numbers are read off the files by eye (and by python3's json module), not by this
// parser.

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "rocehil/iperf/report.hpp"

namespace ip = rocehil::iperf;

namespace {

std::string fixture(const std::string& name) {
  std::ifstream in(std::string(ROCEHIL_IPERF_DATA) + "/" + name);
  EXPECT_TRUE(in.good()) << name;
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

ip::Report parsed(const std::string& name) {
  const ip::ParseResult r = ip::parse_json(fixture(name));
  EXPECT_TRUE(r.report.has_value()) << r.error;
  EXPECT_EQ(r.error, "");
  return r.report.value_or(ip::Report{});
}

}  // namespace

TEST(IperfParseJson, TcpClientHoldsBothSidesAndRetransmits) {
  const ip::Report r = parsed("tcp_200m_client.json");
  EXPECT_EQ(r.version, "iperf 3.12");
  EXPECT_EQ(r.protocol, "TCP");
  EXPECT_EQ(r.streams, 1u);
  EXPECT_EQ(r.tos, 40);
  EXPECT_DOUBLE_EQ(r.duration_s.value_or(-1), 2);
  EXPECT_EQ(r.target_bitrate, 200000000u);
  ASSERT_TRUE(r.sent && r.received);
  EXPECT_EQ(r.sent->bytes, 49938432u);
  EXPECT_DOUBLE_EQ(r.sent->bits_per_second, 199744539.75117144);
  EXPECT_EQ(r.sent->retransmits, 0u);
  EXPECT_EQ(r.received->bytes, 49807360u);
  EXPECT_DOUBLE_EQ(r.received->bits_per_second, 196971165.58655018);
  EXPECT_FALSE(r.received->retransmits);
  EXPECT_FALSE(r.sent->packets);  // TCP counts no datagrams
  EXPECT_EQ(r.error, "");
}

TEST(IperfParseJson, TcpServerHasItsReceiveSideAndAnEmptySendSide) {
  const ip::Report r = parsed("tcp_200m_server.json");
  ASSERT_TRUE(r.sent && r.received);
  EXPECT_EQ(r.sent->bytes, 0u);
  EXPECT_FALSE(r.sent->retransmits);  // the server sent nothing, so iperf3 writes none
  EXPECT_EQ(r.received->bytes, 49807360u);
  EXPECT_DOUBLE_EQ(r.received->bits_per_second, 196971165.58655018);
}

TEST(IperfParseJson, UdpReceiverCountsDatagramsAndLosses) {
  for (const char* side : {"udp_200m_client.json", "udp_200m_server.json"}) {
    SCOPED_TRACE(side);
    const ip::Report r = parsed(side);
    EXPECT_EQ(r.protocol, "UDP");
    EXPECT_EQ(r.tos, 40);
    ASSERT_TRUE(r.received);
    EXPECT_EQ(r.received->bytes, 37713160u);
    EXPECT_DOUBLE_EQ(r.received->bits_per_second, 150827753.4206856);
    EXPECT_EQ(r.received->packets, 34523u);
    EXPECT_EQ(r.received->lost_packets, 8478u);
    EXPECT_FALSE(r.received->retransmits);
    EXPECT_TRUE(r.received->jitter_ms);
  }
  const ip::Report client = parsed("udp_200m_client.json");
  ASSERT_TRUE(client.sent);
  EXPECT_EQ(client.sent->bytes, 49989304u);
  EXPECT_EQ(client.sent->packets, 34523u);
}

TEST(IperfParseJson, ParallelStreamsAreSummed) {
  const ip::Report r = parsed("tcp_2streams_shaped_client.json");
  EXPECT_EQ(r.streams, 2u);
  EXPECT_EQ(r.tos, 0);
  EXPECT_EQ(r.target_bitrate, 0u);
  ASSERT_TRUE(r.sent && r.received);
  EXPECT_EQ(r.sent->retransmits, 1250u);
  EXPECT_DOUBLE_EQ(r.received->bits_per_second, 95609336.76219466);
}

TEST(IperfParseJson, ItsErrorMemberIsTheFailure) {
  const ip::Report r = parsed("error_refused_client.json");
  EXPECT_EQ(r.error, "unable to connect to server: Connection refused");
  EXPECT_EQ(r.version, "iperf 3.12");
  EXPECT_FALSE(r.sent);
  EXPECT_FALSE(r.received);
  EXPECT_EQ(r.protocol, "");
}

TEST(IperfParseJson, WhatIsNotIperf3JsonIsRefusedWithWhy) {
  for (const char* text : {"", "iperf3: error", "[1, 2]", "{\"end\": {}}", "{\"start\": 3}"}) {
    SCOPED_TRACE(text);
    const ip::ParseResult r = ip::parse_json(text);
    EXPECT_FALSE(r.report);
    EXPECT_NE(r.error, "");
  }
}

TEST(IperfParseJson, WrongTypesAndNegativeCountsStayAbsent) {
  const ip::ParseResult r = ip::parse_json(
      R"({"start": {"version": 3, "test_start": {"tos": -1, "num_streams": "1"}},
          "end": {"sum_sent": {"bytes": -5, "bits_per_second": 1},
                  "sum_received": {"bytes": 10, "bits_per_second": 80, "packets": 1.5}}})");
  ASSERT_TRUE(r.report);
  EXPECT_EQ(r.report->version, "");
  EXPECT_FALSE(r.report->tos);
  EXPECT_FALSE(r.report->streams);
  EXPECT_FALSE(r.report->sent);
  ASSERT_TRUE(r.report->received);
  EXPECT_FALSE(r.report->received->packets);
}
