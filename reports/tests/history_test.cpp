#include "rocehil/reports/history.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "record_fixture.hpp"
#include "rocehil/common/error.hpp"

namespace rocehil::reports {
namespace {

namespace fs = std::filesystem;

struct TempDb {
  fs::path dir = fs::temp_directory_path() / ("rocehil-history-" + std::to_string(getpid()));
  std::string path = (dir / "history.db").string();
  TempDb() {
    fs::remove_all(dir);
    fs::create_directories(dir);
  }
  ~TempDb() { fs::remove_all(dir); }
};

TEST(History, ARunRoundTripsWithItsCountsAndSamples) {
  TempDb tmp;
  RunRecord run = testing::sample_run();
  run.exit_code = 3;
  // A second repeat of the failing case: its samples come back in repeat order.
  CaseRecord& failing = run.cases[1];
  Attempt again = failing.attempts[0];
  again.repeat = 1;
  again.metrics["busbw_gbps"] = 0.3;
  failing.attempts.push_back(again);
  {
    History h = History::open(tmp.path);
    h.record(run);
  }
  const History h = History::open(tmp.path);  // the file keeps it
  const auto rows = h.runs(std::nullopt, 10);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].run_id, "20261122T184501Z-smoke");
  EXPECT_EQ(rows[0].suite, "smoke");
  EXPECT_EQ(rows[0].exit_code, 3);
  EXPECT_TRUE(rows[0].interrupted);
  const OutcomeCounts n = count_outcomes(run);
  EXPECT_EQ(rows[0].cases, 5);
  EXPECT_EQ(rows[0].passed, n.pass + n.warn + n.expected_fail);
  EXPECT_EQ(rows[0].failed, n.fail + n.unexpected_pass);
  EXPECT_EQ(rows[0].errors, n.error);
  EXPECT_EQ(rows[0].not_run, n.not_run);
  EXPECT_EQ(h.samples(run.run_id, "allreduce/qps=8", "busbw_gbps"),
            (std::vector<double>{0.25, 0.3}));
  EXPECT_TRUE(h.samples(run.run_id, "allreduce/qps=8", "time_cv").empty());  // NaN: no sample
  EXPECT_TRUE(h.samples(run.run_id, "alltoall", "busbw_gbps").empty());      // an error
}

TEST(History, RecordingAgainReplacesAndRunsListNewestFirstPerSuite) {
  TempDb tmp;
  History h = History::open(tmp.path);
  RunRecord a = testing::sample_run();
  h.record(a);
  a.cases.resize(2);
  h.record(a);  // the same run, rewritten at its end
  RunRecord b = testing::sample_run();
  b.run_id = "20261123T010000Z-nightly";
  b.started_at = "2026-11-23T01:00:00Z";
  b.suite_name = "nightly";
  h.record(b);
  const auto all = h.runs(std::nullopt, 10);
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0].run_id, b.run_id);
  EXPECT_EQ(all[1].cases, 2);
  const auto smoke = h.runs(std::string("smoke"), 10);
  ASSERT_EQ(smoke.size(), 1u);
  EXPECT_EQ(smoke[0].run_id, a.run_id);
  EXPECT_EQ(h.runs(std::nullopt, 1).size(), 1u);
}

TEST(History, AnUnopenablePathIsAClearError) {
  try {
    History::open("/nonexistent/dir/history.db");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("cannot open the run history /nonexistent/dir/"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace rocehil::reports
