#include "rocehil/perftest/command.hpp"

#include <gtest/gtest.h>

#include "rocehil/common/error.hpp"

namespace rocehil::perftest {
namespace {

using Words = std::vector<std::string>;

CommandOptions write_bw_client() {
  CommandOptions o;
  o.tool = Tool::write_bw;
  o.device = "mlx5_0";
  o.ib_port = 1;
  o.gid_index = 3;
  o.size = 65536;
  o.qps = 8;
  o.tx_depth = 128;
  o.seconds = 5;
  o.mtu = 4096;
  o.traffic_class = 106;
  o.sl = 3;
  o.tcp_port = 40123;
  o.server = "198.18.1.2";
  o.json_file = "/tmp/rocehil-perftest-x/out.json";
  return o;
}

TEST(PerftestCommand, ClientWordsCarryEverySettingAsItsOwnWord) {
  EXPECT_EQ(command_words(write_bw_client()),
            (Words{"ib_write_bw", "-d",
                   "mlx5_0",      "-i",
                   "1",           "-x",
                   "3",           "-s",
                   "65536",       "-q",
                   "8",           "-t",
                   "128",         "-D",
                   "5",           "-m",
                   "4096",        "--tclass=106",
                   "--sl=3",      "-p",
                   "40123",       "--report_gbits",
                   "--out_json",  "--out_json_file=/tmp/rocehil-perftest-x/out.json",
                   "198.18.1.2"}));
}

TEST(PerftestCommand, ServerHasNoAddressAndDefaultsAreLeftToPerftest) {
  CommandOptions o;
  o.tool = Tool::read_bw;
  o.tcp_port = 18515;
  // No device, GID, TX depth, duration, iterations, MTU or class: perftest's own choices.
  EXPECT_EQ(command_words(o), (Words{"ib_read_bw", "-i", "1", "-s", "65536", "-q", "1", "-p",
                                     "18515", "--report_gbits"}));
}

TEST(PerftestCommand, LatencyToolsTakeIterationsAndNoBandwidthOptions) {
  CommandOptions o;
  o.tool = Tool::send_lat;
  o.size = 8;
  o.iterations = 10000;
  o.server = "10.0.0.2";
  EXPECT_EQ(command_words(o), (Words{"ib_send_lat", "-i", "1", "-s", "8", "-n", "10000", "-p",
                                     "18515", "--report_gbits", "10.0.0.2"}));
  o.inline_bytes = 0;  // as rocehil's agent posts: nothing inline
  EXPECT_EQ(command_words(o), (Words{"ib_send_lat", "-i", "1", "-s", "8", "-n", "10000", "-I", "0",
                                     "-p", "18515", "--report_gbits", "10.0.0.2"}));
  o.inline_bytes = -1;
  o.qps = 2;
  EXPECT_THROW(command_words(o), Error);
  o.qps = 1;
  o.bidirectional = true;
  EXPECT_THROW(command_words(o), Error);
  o.bidirectional = false;
  o.tx_depth = 16;
  EXPECT_THROW(command_words(o), Error);
}

TEST(PerftestCommand, BidirectionalAndUdAreFlags) {
  CommandOptions o;
  o.tool = Tool::send_bw;
  o.size = 1024;
  o.mtu = 1024;
  o.bidirectional = true;
  o.ud = true;
  const Words w = command_words(o);
  EXPECT_NE(std::find(w.begin(), w.end(), "-b"), w.end());
  const auto c = std::find(w.begin(), w.end(), "-c");
  ASSERT_NE(c, w.end());
  EXPECT_EQ(*(c + 1), "UD");
}

void expect_refused(const CommandOptions& o, const std::string& words) {
  try {
    command_words(o);
    ADD_FAILURE() << "accepted; expected a refusal mentioning '" << words << "'";
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), ExitCode::bad_input);
    EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
  }
}

TEST(PerftestCommand, RefusesWhatPerftestWouldRefuseNamingTheSetting) {
  auto o = write_bw_client();
  o.device = "-x";  // would be read as an option
  expect_refused(o, "not an RDMA device name");
  o = write_bw_client();
  o.device = "mlx5_0 -b";
  expect_refused(o, "not an RDMA device name");
  o = write_bw_client();
  o.server = "h2;reboot";
  expect_refused(o, "not an IPv4 address");
  o.server = "2001:db8::1";  // perftest's handshake socket is AF_INET only
  expect_refused(o, "IPv4 only");
  o = write_bw_client();
  o.iterations = 1000;
  expect_refused(o, "not both");
  o.seconds = 0;
  o.iterations = 4;
  expect_refused(o, "iterations 4");
  o = write_bw_client();
  o.mtu = 1500;
  expect_refused(o, "MTU 1500");
  o = write_bw_client();
  o.tx_depth = 15001;
  expect_refused(o, "TX depth 15001");
  o = write_bw_client();
  o.ud = true;
  expect_refused(o, "only SEND runs on UD");
  o.tool = Tool::send_bw;
  o.mtu = 1024;
  o.size = 4096;
  expect_refused(o, "over the MTU");
  o = write_bw_client();
  o.inline_bytes = 913;
  expect_refused(o, "inline size 913");
  o = write_bw_client();
  o.tool = Tool::read_bw;
  o.inline_bytes = 0;
  expect_refused(o, "a READ request carries no data");
  o = write_bw_client();
  o.traffic_class = 256;
  expect_refused(o, "traffic class 256");
  o = write_bw_client();
  o.json_file = "out.json";
  expect_refused(o, "absolute path");
  o = write_bw_client();
  o.tcp_port = 0;
  expect_refused(o, "TCP port 0");
}

TEST(PerftestTool, NamesRoundTripAndSayWhichMeasureBandwidth) {
  for (const Tool t : {Tool::write_bw, Tool::read_bw, Tool::send_bw, Tool::write_lat,
                       Tool::read_lat, Tool::send_lat}) {
    EXPECT_EQ(tool_named(to_string(t)), t);
    EXPECT_EQ(tool_named(program(t)), t);
    EXPECT_EQ(is_bandwidth(t), to_string(t).ends_with("_bw"));
  }
  EXPECT_EQ(program(Tool::send_lat), "ib_send_lat");
  EXPECT_FALSE(tool_named("atomic_bw"));
  EXPECT_FALSE(tool_named(""));
}

}  // namespace
}  // namespace rocehil::perftest
