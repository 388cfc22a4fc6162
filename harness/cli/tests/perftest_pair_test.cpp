// run::run_perftest_pair between two real agent sessions in this process. No RDMA device exists
// here, so perftest itself is the stand-in tests/system/perftest_stand_in.py on PATH: it does
// perftest's handshake and prints a real perftest table; what is tested is everything around it
// (the server first, the port it listens on reaching the client, both results, the metrics, and
// who is blamed when a side fails).
#include <stdlib.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <csignal>
#include <filesystem>
#include <thread>

#include "rocehil/run/perftest_pair.hpp"
#include "traffic/in_process_agent.hpp"
#include "traffic/perftest_text.hpp"

namespace rocehil::cli {
namespace {

class PerftestPair : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/rocehil-perftest-pair-XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    dir_ = pattern;
    for (const char* tool : {"ib_write_bw", "ib_send_lat"})
      std::filesystem::create_symlink(ROCEHIL_STAND_IN, dir_ + "/" + tool);
    path_ = std::getenv("PATH");
    setenv("PATH", (dir_ + ":" + path_).c_str(), 1);
    table("write_bw_gbps_cx7.txt");
  }
  void TearDown() override {
    setenv("PATH", path_.c_str(), 1);
    unsetenv("ROCEHIL_STAND_IN_TABLE");
    unsetenv("ROCEHIL_STAND_IN_FAIL");
    std::filesystem::remove_all(dir_);
  }
  static void table(const std::string& fixture) {
    setenv("ROCEHIL_STAND_IN_TABLE", (std::string(ROCEHIL_PERFTEST_DATA) + "/" + fixture).c_str(),
           1);
  }

  run::PerftestPairResult run(run::PerftestPairConfig config) {
    auto client = make_in_process_agent("test");
    auto server = make_in_process_agent("test");
    std::atomic<bool> interrupt{false};
    return run::run_perftest_pair(*client, *server, config, {}, interrupt);
  }

  static run::PerftestPairConfig bw() {
    run::PerftestPairConfig c;
    c.client.role = agent::Role::client;
    c.client.tool = "write_bw";
    c.client.seconds = 1;
    c.client.server = "127.0.0.1";
    c.server = c.client;
    c.server.role = agent::Role::server;
    c.server.server.clear();
    c.reply_timeout = std::chrono::seconds(20);
    return c;
  }

  std::string dir_, path_;
};

TEST_F(PerftestPair, TheServerGoesFirstAndItsPortReachesTheClient) {
  const run::PerftestPairResult r = run(bw());
  ASSERT_TRUE(r.client.results && r.server.results);
  EXPECT_EQ(r.client.results->error, "");
  EXPECT_EQ(r.server.results->error, "");
  EXPECT_FALSE(run::perftest_failure(r));
  const auto port_of = [](const std::vector<std::string>& words) {
    const auto p = std::find(words.begin(), words.end(), "-p");
    return p == words.end() ? std::string() : *(p + 1);
  };
  EXPECT_EQ(port_of(r.client.results->command), port_of(r.server.results->command));
  EXPECT_NE(port_of(r.client.results->command), "18515");  // a free one, chosen by the server

  // The metrics are the fixture's numbers (write_bw_gbps_cx7.txt: BW average 392.34 Gb/s).
  const suites::Measured m = run::perftest_metrics(r);
  EXPECT_EQ(m.values.at("busbw_gbps"), r.client.results->report->bw->average_gbps);
  EXPECT_EQ(m.values.at("perftest_bw_peak_gbps"), r.client.results->report->bw->peak_gbps.value());
  EXPECT_GT(m.values.at("busbw_gbps"), 0);
  EXPECT_TRUE(m.unmeasured.count("retransmits"));
  EXPECT_TRUE(m.unmeasured.count("data_errors"));
  EXPECT_FALSE(m.values.count("lat_p50_us"));
  EXPECT_NE(format_perftest_pair(r).find("BW average"), std::string::npos);
}

TEST_F(PerftestPair, LatencyBecomesTheLatencyMetrics) {
  table("send_lat_rc_cx7.txt");
  run::PerftestPairConfig c = bw();
  c.client.tool = c.server.tool = "send_lat";
  c.client.seconds = c.server.seconds = 0;
  c.client.iterations = c.server.iterations = 1000;
  const run::PerftestPairResult r = run(c);
  ASSERT_TRUE(r.client.results && r.client.results->report && r.client.results->report->lat);
  const perftest::LatRow& lat = *r.client.results->report->lat;
  const suites::Measured m = run::perftest_metrics(r);
  EXPECT_EQ(m.values.at("lat_p50_us"), *lat.typical_us);
  EXPECT_EQ(m.values.at("lat_p99_us"), *lat.p99_us);
  EXPECT_EQ(m.values.at("perftest_t_p999_us"), *lat.p999_us);
  EXPECT_FALSE(m.values.count("busbw_gbps"));
}

TEST_F(PerftestPair, AServerThatCannotStartIsBlamedAndTheClientNeverRuns) {
  setenv("ROCEHIL_STAND_IN_FAIL", "no-device", 1);
  const run::PerftestPairResult r = run(bw());
  EXPECT_FALSE(r.client.results);
  ASSERT_TRUE(r.server.results);
  const auto failure = run::perftest_failure(r);
  ASSERT_TRUE(failure);
  EXPECT_EQ(failure->side, r.server.name);
  EXPECT_NE(failure->message.find("Did not detect devices"), std::string::npos) << failure->message;
  const suites::Measured m = run::perftest_metrics(r);
  EXPECT_FALSE(m.values.count("busbw_gbps"));
  EXPECT_NE(m.unmeasured.at("busbw_gbps").find("Did not detect devices"), std::string::npos)
      << m.unmeasured.at("busbw_gbps");
}

TEST_F(PerftestPair, ACtrlCStopsBothSidesAndKeepsWhatTheySaid) {
  setenv("ROCEHIL_STAND_IN_FAIL", "hang", 1);
  auto client = make_in_process_agent("test");
  auto server = make_in_process_agent("test");
  std::atomic<bool> interrupt{false};
  std::thread ctrl_c([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(800));
    interrupt = true;
  });
  const auto started = std::chrono::steady_clock::now();
  const run::PerftestPairResult r = run::run_perftest_pair(*client, *server, bw(), {}, interrupt);
  ctrl_c.join();
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(20));
  EXPECT_TRUE(r.interrupted);
  ASSERT_TRUE(r.client.results && r.server.results);
  EXPECT_TRUE(r.client.results->stopped);
  EXPECT_EQ(r.client.results->exit_code, -SIGTERM);
  const auto failure = run::perftest_failure(r);
  ASSERT_TRUE(failure);
  EXPECT_NE(failure->message.find("stopped by a signal"), std::string::npos);
}

TEST_F(PerftestPair, AClientThatCannotConnectIsBlamedAndTheServerIsStopped) {
  run::PerftestPairConfig c = bw();
  // The server listens on every address of this host, so the client is pointed at one that is
  // not this host's (the benchmarking range, unused here): its connect fails.
  c.client.server = "198.18.255.254";
  const run::PerftestPairResult r = run(c);
  ASSERT_TRUE(r.client.results && r.server.results);
  EXPECT_TRUE(r.server.results->stopped);
  const auto failure = run::perftest_failure(r);
  ASSERT_TRUE(failure);
  EXPECT_EQ(failure->side, r.client.name);
  EXPECT_NE(failure->message.find("Couldn't connect to 198.18.255.254"), std::string::npos)
      << failure->message;
}

}  // namespace
// perftest prints "BW peak 0.00" where it did not measure the peak (a run by duration): that is
// no peak of 0, it is none, and a threshold on it grades error with the reason.
TEST(PerftestMetrics, APeakPerftestDidNotMeasureIsAbsentWithTheReason) {
  run::PerftestPairResult r;
  r.client.name = "h1";
  r.client.results.emplace();
  r.client.results->report.emplace();
  r.client.results->report->bw = perftest::BwRow{.bytes = 65536,
                                                 .iterations = 24777100,
                                                 .peak_gbps = std::nullopt,
                                                 .average_gbps = 86.6,
                                                 .msg_rate_mpps = 0.165156};
  r.server.name = "h2";
  r.server.results.emplace();
  const suites::Measured m = run::perftest_metrics(r);
  EXPECT_FALSE(m.values.count("perftest_bw_peak_gbps"));
  ASSERT_TRUE(m.unmeasured.count("perftest_bw_peak_gbps"));
  EXPECT_NE(m.unmeasured.at("perftest_bw_peak_gbps").find("did not measure the BW peak"),
            std::string::npos);
  EXPECT_EQ(m.values.at("perftest_bw_average_gbps"), 86.6);
}

}  // namespace rocehil::cli
