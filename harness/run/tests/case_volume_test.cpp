// A bw case by volume: the messages each QP is asked for, and run.json's volume asked against
// the bytes moved, with a run that moved less saying so.
#include "cases/case_volume.hpp"

#include <gtest/gtest.h>

namespace rocehil::run::case_traffic {
namespace {

suites::SuiteTest bw_test(std::uint64_t bytes, std::string workload = "bw") {
  suites::SuiteTest t;
  t.name = "t";
  t.workload = std::move(workload);
  t.settings.bytes = bytes;
  return t;
}

TEST(CaseVolume, MessagesPerQpAreTheVolumeInWholeMessages) {
  EXPECT_EQ(volume_messages(bw_test(std::uint64_t{4} << 30), 65536), 65536u);
  EXPECT_EQ(volume_messages(bw_test(0), 65536), 0u);  // by duration_s
  EXPECT_EQ(volume_messages(bw_test(1 << 20, "lat"), 64), 0u);
}

TEST(CaseVolume, AllMovedIsComplete) {
  VolumeMoved v;
  v.bytes_per_qp = 1 << 20;
  v.qps = 4;
  v.moved = std::uint64_t{4} << 20;
  const auto j = volume_json(v);
  EXPECT_EQ(j["bytes_asked"], std::uint64_t{4} << 20);
  EXPECT_EQ(j["bytes_moved"], std::uint64_t{4} << 20);
  EXPECT_EQ(j["complete"], true);
  EXPECT_FALSE(volume_shortfall(v).has_value());
}

TEST(CaseVolume, ARunThatMovedLessSaysSo) {
  VolumeMoved v;
  v.bytes_per_qp = 1 << 20;
  v.qps = 4;
  v.moved = std::uint64_t{3} << 20;
  v.qps_short = 1;
  EXPECT_EQ(volume_json(v)["complete"], false);
  EXPECT_EQ(volume_shortfall(v),
            "moved 3145728 of the 4194304 bytes asked (bytes: 1048576 per QP; 1 of 4 QPs short)");
  // The same total with one QP short of its own volume is not complete either.
  v.moved = std::uint64_t{4} << 20;
  EXPECT_EQ(volume_json(v)["complete"], false);
}

TEST(CaseVolume, NothingReportedIsAbsentNotZero) {
  VolumeMoved v;
  v.bytes_per_qp = 4096;
  v.qps = 2;
  const auto j = volume_json(v);
  EXPECT_FALSE(j.contains("bytes_moved"));
  EXPECT_FALSE(j.contains("complete"));
  EXPECT_EQ(volume_shortfall(v),
            "the sender reported no bytes moved of the 8192 asked (bytes: 4096 per QP)");
}

}  // namespace
}  // namespace rocehil::run::case_traffic
