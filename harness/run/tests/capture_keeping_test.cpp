// Keeping captures with real files and a real command: the capture host is this machine (the
// local launcher runs cat and rm as it would run them in a host's namespace), so the copies, the
// deletions and the run's bound are what a run does.
#include "cases/capture_keeping.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace rocehil::run {
namespace {

namespace fs = std::filesystem;

std::string read_all(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

class CaptureKeepingTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() /
            ("rocehil-keep-" + std::to_string(::getpid()) + "-" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(root_ / "host");
    fs::create_directories(root_ / "run");
    inventory::Host cap;
    cap.name = "cap";
    cap.launcher = inventory::Launcher::local;
    inventory_.hosts.push_back(cap);
    keeping_ = capture_keeping(suites::CaptureDefaults{.keep = "failed"}, "", "20261127T1-x",
                               (root_ / "run").string());
    record_.id = "allreduce/qps=8";
  }
  void TearDown() override { fs::remove_all(root_); }

  // A file the capture host wrote, with `bytes` bytes.
  std::string written(const std::string& name, std::size_t bytes) {
    const fs::path p = root_ / "host" / name;
    std::ofstream(p, std::ios::binary) << std::string(bytes, 'x') + name;
    return p.string();
  }

  reports::Attempt attempt(suites::Verdict verdict, std::vector<std::string> files) {
    reports::Attempt a;
    a.grade = suites::CaseGrade{};
    a.grade->verdict = verdict;
    a.raw["captures"] = nlohmann::json::array(
        {{{"point", "s1-mirror"}, {"host", "cap"}, {"written_on_host", files}}});
    return a;
  }

  void settle(reports::Attempt& a) {
    settle_captures(keeping_, inventory_, nullptr, record_, 0, a, std::chrono::seconds(10));
  }

  fs::path root_;
  inventory::Inventory inventory_;
  CaptureKeeping keeping_;
  reports::CaseRecord record_;
};

TEST_F(CaptureKeepingTest, AFailedAttemptsFilesAreCopiedByCaseAndDeletedOnTheHost) {
  const std::string first = written("ring-0001.pcapng", 1000);
  const std::string second = written("ring-0002.pcapng", 500);
  const std::string first_bytes = read_all(first), second_bytes = read_all(second);
  reports::Attempt a = attempt(suites::Verdict::fail, {first, second});
  settle(a);
  ASSERT_EQ(a.captures_kept.size(), 1u);
  const reports::KeptCapture& k = a.captures_kept[0];
  EXPECT_EQ(k.not_kept, "");
  EXPECT_EQ(k.point, "s1-mirror");
  EXPECT_EQ(k.host, "cap");
  ASSERT_EQ(k.files, (std::vector<std::string>{"captures/allreduce_qps=8/a1-s1-mirror-1.pcapng",
                                               "captures/allreduce_qps=8/a1-s1-mirror-2.pcapng"}));
  EXPECT_EQ(read_all(root_ / "run" / k.files[0]), first_bytes);
  EXPECT_EQ(read_all(root_ / "run" / k.files[1]), second_bytes);
  EXPECT_EQ(k.bytes, first_bytes.size() + second_bytes.size());
  EXPECT_EQ(keeping_.kept_bytes, k.bytes);
  EXPECT_FALSE(fs::exists(first));
  EXPECT_FALSE(fs::exists(second));
}

TEST_F(CaptureKeepingTest, APassingAttemptKeepsNothingAndLeavesNothingOnTheHost) {
  const std::string file = written("pass.pcapng", 100);
  reports::Attempt a = attempt(suites::Verdict::pass, {file});
  settle(a);
  EXPECT_TRUE(a.captures_kept.empty());
  EXPECT_FALSE(fs::exists(file));
  EXPECT_FALSE(fs::exists(root_ / "run" / "captures"));
}

TEST_F(CaptureKeepingTest, TheRunsTotalIsABoundAndSaysSo) {
  keeping_.total_limit_bytes = 1500;
  reports::Attempt a = attempt(suites::Verdict::fail, {written("one.pcapng", 1000)});
  settle(a);
  ASSERT_EQ(a.captures_kept.size(), 1u);
  EXPECT_EQ(a.captures_kept[0].not_kept, "");
  const std::string second = written("two.pcapng", 1000);
  reports::Attempt b = attempt(suites::Verdict::fail, {second});
  settle(b);
  ASSERT_EQ(b.captures_kept.size(), 1u);
  EXPECT_NE(b.captures_kept[0].not_kept.find("capture.keep_total_mb"), std::string::npos)
      << b.captures_kept[0].not_kept;
  EXPECT_TRUE(b.captures_kept[0].files.empty());
  EXPECT_EQ(b.captures_kept[0].bytes, 0u);
  EXPECT_FALSE(fs::exists(second));
  EXPECT_EQ(keeping_.kept_bytes, a.captures_kept[0].bytes);
}

TEST_F(CaptureKeepingTest, AFileThatCannotBeCopiedIsSaidAndNothingHalfCopiedStays) {
  const std::string there = written("there.pcapng", 10);
  reports::Attempt a = attempt(suites::Verdict::error, {there, (root_ / "host/gone").string()});
  a.grade.reset();
  a.error = reports::AttemptError{"h1", "traffic", "agent died"};
  settle(a);
  ASSERT_EQ(a.captures_kept.size(), 1u);
  EXPECT_NE(a.captures_kept[0].not_kept.find("could not copy " + (root_ / "host/gone").string() +
                                             " from cap"),
            std::string::npos)
      << a.captures_kept[0].not_kept;
  EXPECT_TRUE(a.captures_kept[0].files.empty());
  EXPECT_TRUE(fs::is_empty(root_ / "run" / "captures" / "allreduce_qps=8"));
  EXPECT_FALSE(fs::exists(there));
}

TEST_F(CaptureKeepingTest, WhatIsKeptFollowsTheModeAndTheExpectedFailure) {
  reports::Attempt failed = attempt(suites::Verdict::fail, {});
  reports::Attempt warned = attempt(suites::Verdict::warn, {});
  reports::Attempt passed = attempt(suites::Verdict::pass, {});
  EXPECT_TRUE(keeps_attempt(keeping_, failed, false));
  EXPECT_TRUE(keeps_attempt(keeping_, warned, false));
  EXPECT_FALSE(keeps_attempt(keeping_, passed, false));
  EXPECT_FALSE(keeps_attempt(keeping_, failed, true));  // the fault was caught: a pass
  EXPECT_TRUE(keeps_attempt(keeping_, passed, true));   // an unexpected pass
  keeping_.mode = "always";
  EXPECT_TRUE(keeps_attempt(keeping_, passed, false));
  keeping_.mode = "never";
  EXPECT_FALSE(keeps_attempt(keeping_, failed, false));
  EXPECT_EQ(capture_keeping({.keep = "never"}, "always", "r", "d").mode, "always");
}

TEST_F(CaptureKeepingTest, NamesAreFileSafeWhateverTheSuiteAndInventorySay) {
  EXPECT_EQ(capture_write_path(keeping_, 2, 0, "s1 mirror;rm -rf /"),
            "/var/tmp/rocehil-20261127T1-x-c3-a1-s1_mirror_rm_-rf__.pcapng");
  EXPECT_EQ(kept_capture_dir("incast/size=1M,qps=2"), "captures/incast_size=1M_qps=2");
  EXPECT_EQ(kept_capture_dir("../up"), "captures/_.._up");
}

}  // namespace
}  // namespace rocehil::run
