// command_words: iperf3's argv, one word per argument, and what it refuses.

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "rocehil/common/error.hpp"
#include "rocehil/iperf/command.hpp"

namespace ip = rocehil::iperf;
using Words = std::vector<std::string>;

namespace {

ip::CommandOptions client() {
  ip::CommandOptions o;
  o.bind = "198.18.1.1";
  o.connect_to = "198.18.2.1";
  o.port = 40123;
  o.seconds = 3;
  return o;
}

std::string refusal(const ip::CommandOptions& o) {
  try {
    (void)ip::command_words(o);
  } catch (const rocehil::Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(IperfCommand, ServerRunsOneTestWithJsonBoundToItsAddress) {
  ip::CommandOptions o;
  o.server = true;
  o.bind = "198.18.2.1";
  o.port = 40123;
  EXPECT_EQ(ip::command_words(o),
            (Words{"iperf3", "-s", "-1", "--json", "-i", "0", "-B", "198.18.2.1", "-p", "40123"}));
}

TEST(IperfCommand, TcpClientSendsUnlimitedByDefault) {
  EXPECT_EQ(ip::command_words(client()), (Words{"iperf3", "-c", "198.18.2.1", "--json", "-i", "0",
                                                "-B", "198.18.1.1", "-p", "40123", "-t", "3"}));
}

TEST(IperfCommand, UdpClientWithRateTosAndStreams) {
  ip::CommandOptions o = client();
  o.udp = true;
  o.rate_bps = 200'000'000;
  o.tos = 40;
  o.streams = 4;
  EXPECT_EQ(ip::command_words(o),
            (Words{"iperf3", "-c", "198.18.2.1", "--json", "-i", "0", "-B", "198.18.1.1", "-p",
                   "40123", "-t", "3", "-u", "-b", "200000000", "-S", "40", "-P", "4"}));
}

TEST(IperfCommand, AWordThatLooksLikeAShellLineStaysOneRefusedWord) {
  ip::CommandOptions o = client();
  o.connect_to = "198.18.2.1; rm -rf /";
  EXPECT_NE(refusal(o).find("is not an IP address"), std::string::npos);
  o = client();
  o.bind = "-s";
  EXPECT_NE(refusal(o).find("is not an IP address"), std::string::npos);
}

TEST(IperfCommand, UdpWithoutARateIsRefusedRatherThanSentAtOneMbit) {
  ip::CommandOptions o = client();
  o.udp = true;
  EXPECT_NE(refusal(o).find("1 Mbit/s"), std::string::npos);
}

TEST(IperfCommand, IperfsOwnLimitsAreRefusedByName) {
  ip::CommandOptions o = client();
  o.streams = 129;
  EXPECT_NE(refusal(o).find("streams 129"), std::string::npos);
  o = client();
  o.seconds = 86401;
  EXPECT_NE(refusal(o).find("duration 86401"), std::string::npos);
  o = client();
  o.seconds = 0;
  EXPECT_NE(refusal(o).find("duration 0"), std::string::npos);
  o = client();
  o.tos = 256;
  EXPECT_NE(refusal(o).find("TOS 256"), std::string::npos);
  o = client();
  o.port = 0;
  EXPECT_NE(refusal(o).find("port 0"), std::string::npos);
  o = client();
  o.bind.clear();
  EXPECT_NE(refusal(o).find("-B"), std::string::npos);
}

TEST(IperfCommand, AServerTakesNoServerAddress) {
  ip::CommandOptions o = client();
  o.server = true;
  EXPECT_NE(refusal(o).find("takes no server address"), std::string::npos);
}

TEST(IperfCommand, Ipv6AddressesAreTaken) {
  ip::CommandOptions o = client();
  o.bind = "fd00::1";
  o.connect_to = "fd00::2";
  EXPECT_EQ(ip::command_words(o)[2], "fd00::2");
}
