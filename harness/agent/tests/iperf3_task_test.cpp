// The agent's iperf3 task, with the real iperf3 (Debian's; skipped where it is not installed)
// on this machine's loopback: a server reported listening, a client sending to it, and both
// sides' own numbers; iperf3's failures in its own words; a missing iperf3 named.
#include "iperf3_task.hpp"

#include <stdlib.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "rocehil/perftest/child_process.hpp"

namespace rocehil::agent {
namespace {

using namespace std::chrono_literals;

class Iperf3Task : public ::testing::Test {
 protected:
  void SetUp() override { wake_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK); }
  void TearDown() override {
    close(wake_);
    if (!path_.empty()) setenv("PATH", path_.c_str(), 1);
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }

  static Iperf3ResultsEvent results_of(AgentIperf3& task, std::chrono::seconds limit = 60s) {
    const auto until = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < until) {
      if (auto r = task.take_results()) return *r;
      std::this_thread::sleep_for(20ms);
    }
    ADD_FAILURE() << "no results within " << limit.count() << " s";
    task.stop();
    return {};
  }

  int wake_ = -1;
  std::string dir_, path_;
};

Iperf3Request client_to(std::uint16_t port) {
  Iperf3Request c;
  c.role = Role::client;
  c.bind = "127.0.0.1";
  c.server = "127.0.0.1";
  c.port = port;
  c.seconds = 1;
  return c;
}

TEST_F(Iperf3Task, AServerListensThenBothSidesReportTheSameReceivedBytes) {
  if (!perftest::find_on_path("iperf3")) GTEST_SKIP() << "iperf3 is not installed";
  AgentIperf3 server(wake_), client(wake_);
  Iperf3Request s;
  s.role = Role::server;
  s.bind = "127.0.0.1";
  s.seconds = 1;
  server.start(s);
  std::optional<Iperf3ListeningReply> listening;
  for (int i = 0; i < 1000 && !listening; ++i) {
    listening = server.take_listening();
    if (!listening) std::this_thread::sleep_for(10ms);
  }
  ASSERT_TRUE(listening);
  Iperf3Request c = client_to(listening->port);
  c.protocol = "udp";
  c.rate_bps = 20'000'000;
  c.tos = 40;
  client.start(c);
  const Iperf3ResultsEvent cr = results_of(client);
  const Iperf3ResultsEvent sr = results_of(server);
  ASSERT_EQ(cr.error, "") << cr.output;
  ASSERT_EQ(sr.error, "") << sr.output;
  ASSERT_TRUE(cr.report && cr.report->received && cr.report->sent);
  ASSERT_TRUE(sr.report && sr.report->received);
  // Two processes' own counts: what the server received is what the client was told of it.
  EXPECT_GT(sr.report->received->bytes, 0u);
  EXPECT_EQ(sr.report->received->bytes, cr.report->received->bytes);
  EXPECT_EQ(sr.report->received->packets, cr.report->received->packets);
  EXPECT_EQ(cr.report->protocol, "UDP");
  EXPECT_EQ(sr.report->tos, 40);
  EXPECT_EQ(cr.report->target_bitrate, 20'000'000u);
  // The port the agent picked is the one iperf3 was given.
  const auto p = std::find(sr.command.begin(), sr.command.end(), "-p");
  ASSERT_NE(p, sr.command.end());
  EXPECT_EQ(*(p + 1), std::to_string(listening->port));
  EXPECT_EQ(cr.command.front(), "iperf3");
}

TEST_F(Iperf3Task, NobodyListeningIsIperfsOwnErrorThoughItExitsZero) {
  if (!perftest::find_on_path("iperf3")) GTEST_SKIP() << "iperf3 is not installed";
  AgentIperf3 client(wake_);
  client.start(client_to(perftest::free_tcp_port()));
  const Iperf3ResultsEvent r = results_of(client);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.error.find("unable to connect to server"), std::string::npos) << r.error;
  ASSERT_TRUE(r.report);
  EXPECT_FALSE(r.report->received);
}

TEST_F(Iperf3Task, AnIperf3ThatIsNotInstalledIsNamedWithItsPackage) {
  char pattern[] = "/tmp/rocehil-stand-in-XXXXXX";
  ASSERT_NE(mkdtemp(pattern), nullptr);
  dir_ = pattern;
  path_ = std::getenv("PATH");
  setenv("PATH", dir_.c_str(), 1);  // a PATH without iperf3
  AgentIperf3 client(wake_);
  client.start(client_to(5201));
  const Iperf3ResultsEvent r = results_of(client);
  EXPECT_EQ(r.error, "iperf3 is not installed on this host (Debian: apt-get install iperf3)");
  EXPECT_EQ(r.exit_code, 127);
}

TEST_F(Iperf3Task, AStopEndsAServerAndTheResultsSaySo) {
  if (!perftest::find_on_path("iperf3")) GTEST_SKIP() << "iperf3 is not installed";
  AgentIperf3 server(wake_);
  Iperf3Request s;
  s.role = Role::server;
  s.bind = "127.0.0.1";
  server.start(s);
  std::optional<Iperf3ListeningReply> listening;
  for (int i = 0; i < 1000 && !listening; ++i) {
    listening = server.take_listening();
    if (!listening) std::this_thread::sleep_for(10ms);
  }
  ASSERT_TRUE(listening);
  server.stop();
  const Iperf3ResultsEvent r = results_of(server);
  EXPECT_TRUE(r.stopped);
  EXPECT_NE(r.error, "");  // stopped before any test: iperf3 measured nothing
}

TEST(Iperf3Output, TheErrorMemberWinsOverTheExitCodeAndNothingReadableIsSaid) {
  Iperf3ResultsEvent r;
  read_iperf3_output(r, R"({"start":{"version":"iperf 3.12"},"error":"unable to connect"})", "");
  EXPECT_EQ(r.error, "unable to connect");
  Iperf3ResultsEvent garbage;
  read_iperf3_output(garbage, "iperf3: parameter error\n", "");
  EXPECT_FALSE(garbage.report);
  EXPECT_NE(garbage.error.find("printed no result"), std::string::npos) << garbage.error;
  Iperf3ResultsEvent killed;
  killed.exit_code = -9;
  read_iperf3_output(killed, "", "");
  EXPECT_EQ(killed.error, "iperf3 was ended by signal 9");
}

}  // namespace
}  // namespace rocehil::agent
