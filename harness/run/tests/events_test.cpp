// A suite run observed through its events, as the command line observes it: a host whose agent
// is missing fails the preflight, so the run stops there, and the events say so in order with
// run.json already on disk when the run starts.
#include "rocehil/run/events.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "rocehil/common/error.hpp"
#include "rocehil/run/suite_run.hpp"

namespace rocehil::run {
namespace {

namespace fs = std::filesystem;

class Recorder final : public RunEvents {
 public:
  std::vector<std::string> seen;
  Start start;
  std::size_t failed = 0;
  bool run_json_at_start = false;
  std::string verdict;

  void run_started(const Start& s) override {
    seen.push_back("run_started");
    start = s;
    run_json_at_start = fs::exists(fs::path(s.directory) / "run.json");
  }
  void preflight_progress(std::size_t done, std::size_t total) override {
    seen.push_back("preflight_progress " + std::to_string(done) + "/" + std::to_string(total));
  }
  void preflight_ended(const preflight::CheckReport& report, std::size_t f) override {
    seen.push_back("preflight_ended");
    failed = f;
    verdict = std::string(preflight::to_string(report.hosts.at(0).verdict));
  }
  void test_started(const std::string& test, std::size_t) override {
    seen.push_back("test_started " + test);
  }
  void run_ended(const reports::RunRecord& record, const std::string&) override {
    seen.push_back("run_ended " + std::to_string(record.exit_code.value_or(-1)));
  }
};

class RunEventsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("rocehil-events-" + std::to_string(getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string write(const std::string& name, const std::string& text) {
    const auto path = dir_ / name;
    std::ofstream(path) << text;
    return path.string();
  }

  fs::path dir_;
};

TEST_F(RunEventsTest, APreflightThatFailsEndsTheRunThereAndSaysWhy) {
  SuiteRunOptions o;
  o.suite_file = write("suite.yaml", R"(schema_version: 1
name: tiny
defaults: {provider: soft, hosts: all}
tests:
  - name: p2p
    workload: bw
    size: 4K
    duration_s: 1
)");
  o.inventory_file = write("inventory.yaml", R"(schema_version: 1
name: here
defaults:
  launcher: local
  provider: soft
  agent: /nonexistent/rocehil
hosts:
  - {name: a, address: 127.0.0.1, nics: [{netdev: lo, ip: 127.0.0.1}]}
  - {name: b, address: 127.0.0.2, nics: [{netdev: lo, ip: 127.0.0.2}]}
)");
  o.reports_dir = (dir_ / "reports").string();
  const std::atomic<bool> interrupt{false};
  Recorder events;
  std::string run_id;
  const int code = run_suite(o, interrupt, events, &run_id);

  EXPECT_EQ(code, static_cast<int>(ExitCode::infrastructure));
  EXPECT_EQ(events.seen,
            (std::vector<std::string>{"run_started", "preflight_progress 1/2",
                                      "preflight_progress 2/2", "preflight_ended", "run_ended 3"}));
  EXPECT_EQ(events.start.suite_name, "tiny");
  EXPECT_EQ(events.start.inventory_name, "here");
  EXPECT_EQ(events.start.cases, 1u);
  EXPECT_EQ(events.start.hosts, 2u);
  EXPECT_EQ(events.start.directory, o.reports_dir + "/" + run_id);
  EXPECT_TRUE(events.run_json_at_start);
  EXPECT_EQ(events.failed, 2u);
  EXPECT_EQ(events.verdict, "failed");
}

TEST_F(RunEventsTest, BadInputThrowsBeforeAnyEvent) {
  SuiteRunOptions o;
  o.suite_file = write("suite.yaml", "schema_version: 1\nname: broken\ntests: 3\n");
  o.inventory_file = write("inventory.yaml", "schema_version: 1\nname: x\nhosts: []\n");
  o.reports_dir = (dir_ / "reports").string();
  const std::atomic<bool> interrupt{false};
  Recorder events;
  EXPECT_THROW(run_suite(o, interrupt, events), Error);
  EXPECT_TRUE(events.seen.empty());
  EXPECT_FALSE(fs::exists(dir_ / "reports"));
}

}  // namespace
}  // namespace rocehil::run
