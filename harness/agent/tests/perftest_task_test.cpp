// The agent's perftest task. No machine here has an RDMA device, so the real perftest is run for
// what it does without one (its "no device" failure, its version); running to results and being
// stopped are tested with stand-in programs written by the test, since a perftest that measures
// cannot run here.
#include "perftest_task.hpp"

#include <signal.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <unistd.h>
#include "perftest_fixture.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "rocehil/perftest/child_process.hpp"

namespace rocehil::agent {
namespace {

using namespace std::chrono_literals;

using perftest::testing::fixture;

TEST(PerftestOutput, TheVersionComesFromPerftestsOwnLine) {
  EXPECT_EQ(perftest_version_in("Version: 6.06\n"), "6.06");  // Debian 12's ib_write_bw -V
  EXPECT_EQ(perftest_version_in(" Version: 25.10.0-0.128 \n"), "25.10.0-0.128");
  EXPECT_EQ(perftest_version_in("ib_write_bw: invalid option -- 'V'\n"), "");
}

TEST(PerftestOutput, TheJsonFileIsPreferredAndTheTableIsTheFallback) {
  PerftestResultsEvent r;
  read_perftest_output(r, fixture("write_bw_gbps_cx7.txt"), "", fixture("write_bw_gbps_v4.5.json"));
  ASSERT_TRUE(r.report && r.report->bw);
  EXPECT_EQ(r.report->layout, "perftest --out_json file");
  EXPECT_EQ(r.report->bw->average_gbps, 392.34);
  EXPECT_EQ(r.error, "");

  PerftestResultsEvent text;
  read_perftest_output(text, fixture("write_bw_gbps_cx7.txt"), "", "");
  ASSERT_TRUE(text.report && text.report->bw);
  EXPECT_NE(text.report->layout.find("stdout table"), std::string::npos);
  EXPECT_EQ(text.error, "");
  EXPECT_LE(text.output.size(), max_perftest_output_bytes);
}

TEST(PerftestOutput, AFailureIsToldInPerftestsOwnWords) {
  PerftestResultsEvent r;
  r.exit_code = 1;
  read_perftest_output(r, "", fixture("error_no_device_write_bw.txt"), "");
  EXPECT_FALSE(r.report);
  EXPECT_NE(r.error.find("Did not detect devices"), std::string::npos) << r.error;
  EXPECT_NE(r.output.find("Unable to find the Infiniband/RoCE device"), std::string::npos);

  PerftestResultsEvent silent;  // exit 0 and no table: said so, not a quiet zero
  read_perftest_output(silent, "nothing useful\n", "", "");
  EXPECT_FALSE(silent.report);
  EXPECT_NE(silent.error.find("printed no result"), std::string::npos) << silent.error;

  PerftestResultsEvent killed;
  killed.exit_code = -SIGKILL;
  read_perftest_output(killed, "", "", "");
  EXPECT_EQ(killed.error, "perftest was ended by signal 9");
}

class PerftestTask : public ::testing::Test {
 protected:
  void SetUp() override { wake_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK); }
  void TearDown() override {
    close(wake_);
    if (!path_.empty()) setenv("PATH", path_.c_str(), 1);
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }

  // Runs `request` to its results, at most `limit`.
  PerftestResultsEvent run(AgentPerftest& task, const PerftestRequest& request,
                           std::chrono::seconds limit = 30s) {
    task.start(request);
    const auto until = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < until) {
      if (auto r = task.take_results()) return *r;
      std::this_thread::sleep_for(20ms);
    }
    ADD_FAILURE() << "no results within " << limit.count() << " s";
    task.stop();
    return {};
  }

  // A directory first on PATH holding `program` as a shell script with `body`.
  void stand_in(const std::string& program, const std::string& body) {
    if (dir_.empty()) {
      char pattern[] = "/tmp/rocehil-stand-in-XXXXXX";
      ASSERT_NE(mkdtemp(pattern), nullptr);
      dir_ = pattern;
      path_ = std::getenv("PATH");
      setenv("PATH", (dir_ + ":" + path_).c_str(), 1);
    }
    const std::string file = dir_ + "/" + program;
    std::ofstream(file) << "#!/bin/sh\n" << body << "\n";
    chmod(file.c_str(), 0755);
  }

  int wake_ = -1;
  std::string dir_, path_;
};

PerftestRequest client_request() {
  PerftestRequest p;
  p.role = Role::client;
  p.tool = "write_bw";
  p.server = "127.0.0.1";
  p.tcp_port = 18515;
  p.seconds = 1;
  return p;
}

TEST_F(PerftestTask, RealPerftestWithoutADeviceSaysSoAndNothingIsMeasured) {
  if (!perftest::find_on_path("ib_write_bw")) GTEST_SKIP() << "perftest is not installed";
  AgentPerftest task(wake_);
  const PerftestResultsEvent r = run(task, client_request());
  EXPECT_NE(r.exit_code, 0);
  EXPECT_FALSE(r.report);
  // Without a device perftest stops at its device check; with one, at the connect to a port
  // nobody listens on. Either way the words are perftest's.
  EXPECT_TRUE(r.error.find("Did not detect devices") != std::string::npos ||
              r.error.find("Couldn't connect") != std::string::npos)
      << r.error;
  EXPECT_FALSE(r.version.empty());
  ASSERT_FALSE(r.command.empty());
  EXPECT_EQ(r.command.front(), "ib_write_bw");
  EXPECT_EQ(r.command.back(), "127.0.0.1");
  uint64_t woken = 0;
  EXPECT_EQ(read(wake_, &woken, sizeof woken), static_cast<ssize_t>(sizeof woken));
}

TEST_F(PerftestTask, APerftestThatIsNotInstalledIsNamed) {
  stand_in("ls", "exit 0");  // a PATH that has a directory, but no perftest in it
  setenv("PATH", dir_.c_str(), 1);
  AgentPerftest task(wake_);
  const PerftestResultsEvent r = run(task, client_request());
  EXPECT_EQ(r.error,
            "ib_write_bw is not installed on this host (Debian: apt-get install perftest)");
  EXPECT_EQ(r.exit_code, 127);
}

TEST_F(PerftestTask, AServerIsReportedListeningThenItsTableIsRead) {
  // The stand-in listens on the -p port as perftest's server does, then prints a real table.
  const std::string table = std::string(ROCEHIL_PERFTEST_DATA) + "/write_bw_gbps_cx7.txt";
  stand_in("ib_write_bw",
           "case \"$1\" in -V|--version) echo 'Version: 6.06'; exit 1;; --help) exit 0;; esac\n"
           "port=''; while [ $# -gt 0 ]; do [ \"$1\" = -p ] && port=$2; shift; done\n"
           "exec python3 -c 'import socket,sys\n"
           "s=socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)\n"
           "s.bind((\"0.0.0.0\", int(sys.argv[1]))); s.listen(1); c,_=s.accept(); c.close()\n"
           "sys.stdout.write(open(sys.argv[2]).read())' \"$port\" " +
               table);
  AgentPerftest task(wake_);
  PerftestRequest p;
  p.role = Role::server;
  p.tool = "write_bw";
  p.seconds = 1;
  task.start(p);
  std::optional<PerftestListeningReply> listening;
  for (int i = 0; i < 500 && !listening; ++i) {
    listening = task.take_listening();
    if (!listening) std::this_thread::sleep_for(10ms);
  }
  ASSERT_TRUE(listening);
  EXPECT_NE(listening->tcp_port, 0);
  EXPECT_FALSE(task.take_results());  // it waits for its client
  perftest::ChildProcess client({"python3", "-c",
                                 "import socket,sys; socket.create_connection(('127.0.0.1', "
                                 "int(sys.argv[1]))).close()",
                                 std::to_string(listening->tcp_port)});
  while (!client.poll(50ms)) {
  }
  std::optional<PerftestResultsEvent> r;
  for (int i = 0; i < 500 && !r; ++i) {
    r = task.take_results();
    if (!r) std::this_thread::sleep_for(10ms);
  }
  ASSERT_TRUE(r);
  EXPECT_EQ(r->error, "");
  EXPECT_EQ(r->version, "6.06");
  ASSERT_TRUE(r->report && r->report->bw);
  EXPECT_EQ(r->report->bw->bytes, 65536u);
  // The port the agent picked is the one perftest was given.
  const auto p_flag = std::find(r->command.begin(), r->command.end(), "-p");
  ASSERT_NE(p_flag, r->command.end());
  EXPECT_EQ(*(p_flag + 1), std::to_string(listening->tcp_port));
}

TEST_F(PerftestTask, AStopEndsItAndTheResultsSaySo) {
  stand_in("ib_write_bw", "case \"$1\" in -V|--version|--help) exit 0;; esac\nexec sleep 60");
  AgentPerftest task(wake_);
  task.start(client_request());
  std::this_thread::sleep_for(200ms);
  EXPECT_TRUE(task.active());
  task.stop();
  std::optional<PerftestResultsEvent> r;
  for (int i = 0; i < 500 && !r; ++i) {
    r = task.take_results();
    if (!r) std::this_thread::sleep_for(10ms);
  }
  ASSERT_TRUE(r);
  EXPECT_TRUE(r->stopped);
  EXPECT_EQ(r->exit_code, -SIGTERM);
  EXPECT_FALSE(task.active());
}

TEST_F(PerftestTask, ARunPastItsTimeoutIsEndedAndToldSo) {
  stand_in("ib_write_bw", "case \"$1\" in -V|--version|--help) exit 0;; esac\nexec sleep 60");
  AgentPerftest task(wake_);
  PerftestRequest p = client_request();
  p.timeout_s = 0.5;
  const PerftestResultsEvent r = run(task, p);
  EXPECT_FALSE(r.stopped);
  EXPECT_EQ(r.error.rfind("ib_write_bw ran past its 0.5 s timeout", 0), 0u) << r.error;
}

TEST_F(PerftestTask, OneRunAtATime) {
  stand_in("ib_write_bw", "case \"$1\" in -V|--version|--help) exit 0;; esac\nexec sleep 60");
  AgentPerftest task(wake_);
  task.start(client_request());
  EXPECT_THROW(task.start(client_request()), std::exception);
}

}  // namespace
}  // namespace rocehil::agent
