#include "rocehil/reports/history.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include <sqlite3.h>

#include "record_fixture.hpp"
#include "rocehil/common/error.hpp"
#include "temp_db.hpp"

namespace rocehil::reports {
namespace {

namespace fs = std::filesystem;

using testing::TempDb;

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

// A case counts by the median of its repeats, as the console, the reports and trend show it.
TEST(History, HeadlinesAreTheWorstCaseMediansAndSums) {
  TempDb tmp;
  RunRecord run = testing::sample_run();
  // allreduce/qps=8 gets two more repeats: its median busbw of 0.25, 0.15 and 0.17 is 0.17
  // (their mean is 0.19), lower than qps=1's 0.4.
  run.cases[0].attempts[0].metrics["cnps"] = 10;
  run.cases[1].attempts[0].metrics["cnps"] = 4;
  for (const double busbw : {0.15, 0.17}) {
    Attempt again = run.cases[1].attempts[0];
    again.repeat = static_cast<int>(run.cases[1].attempts.size());
    again.metrics["busbw_gbps"] = busbw;
    again.metrics["cnps"] = busbw == 0.15 ? 40 : 3;
    run.cases[1].attempts.push_back(again);
  }
  History h = History::open(tmp.path);
  h.record(run);
  const auto row = h.runs(std::nullopt, 1).at(0);
  ASSERT_TRUE(row.headline.busbw_gbps);
  EXPECT_DOUBLE_EQ(*row.headline.busbw_gbps, 0.17);
  EXPECT_DOUBLE_EQ(*row.headline.cnps, 14);  // qps=8's cnps 4, 40, 3: median 4
  EXPECT_DOUBLE_EQ(*row.headline.pfc_storms, 1);
  EXPECT_FALSE(row.headline.lat_p99_us);  // nothing measured it
}

TEST(History, ASnapshotHasTheSettingsCasesInOrderAndSamples) {
  TempDb tmp;
  RunRecord run = testing::sample_run();
  run.rocehil_version = "0.1.0";
  run.inventory_text = "hosts: {}";
  run.preflight = nlohmann::json::parse(R"({"hosts": [{"name": "h1", "facts": {
      "kernel": "6.1.0", "rdma": [{"name": "mlx5_0", "fw_ver": "28.39.1002"}],
      "netdevs": [{"name": "eth1", "mtu": 4200, "pfc": [3], "ecn_np": null}]}}]})");
  History h = History::open(tmp.path);
  h.record(run);
  const auto s = h.snapshot("20261122T18");  // a unique beginning is enough
  EXPECT_EQ(s.row.run_id, run.run_id);
  EXPECT_EQ(s.rocehil_version, "0.1.0");
  EXPECT_EQ(s.settings.at("h1 mlx5_0 firmware"), "28.39.1002");
  EXPECT_EQ(s.settings.at("h1 eth1 pfc"), "3");
  EXPECT_EQ(s.settings.at("inventory file"), content_hash("hosts: {}"));
  ASSERT_EQ(s.cases.size(), run.cases.size());
  for (std::size_t i = 0; i < run.cases.size(); ++i) {
    EXPECT_EQ(s.cases[i].id, run.cases[i].id);
    EXPECT_EQ(s.cases[i].outcome, suites::to_string(run.cases[i].outcome));
  }
  EXPECT_EQ(s.samples.at("allreduce/qps=1").at("busbw_gbps"), std::vector<double>{0.4});
  EXPECT_FALSE(s.samples.contains("alltoall"));
}

TEST(History, AnUnknownOrAmbiguousRunIsNamed) {
  TempDb tmp;
  History h = History::open(tmp.path);
  RunRecord a = testing::sample_run();
  h.record(a);
  a.run_id = "20261122T184501Z-smoke-2";
  h.record(a);
  EXPECT_EQ(h.resolve("20261122T184501Z-smoke"), "20261122T184501Z-smoke");  // exact wins
  EXPECT_EQ(h.resolve("20261122T184501Z-smoke-"), "20261122T184501Z-smoke-2");
  try {
    h.resolve("2026");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("more than one run"), std::string::npos) << e.what();
  }
  try {
    h.resolve("1999");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no run '1999'"), std::string::npos) << e.what();
  }
}

TEST(History, ANewerSchemaIsRefusedNotMisread) {
  TempDb tmp;
  { History::open(tmp.path); }
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(tmp.path.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "PRAGMA user_version = 2", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(db);
  try {
    History::open(tmp.path);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("schema version 2, newer"), std::string::npos) << e.what();
  }
}

TEST(History, ThresholdVerdictsAreRecordedPerRepeat) {
  TempDb tmp;
  const RunRecord run = testing::sample_run();
  { History::open(tmp.path).record(run); }
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(tmp.path.c_str(), &db), SQLITE_OK);
  sqlite3_stmt* q = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db,
                               "SELECT threshold, verdict, measured, limit_value FROM verdicts "
                               "WHERE case_id = 'allreduce/qps=8'",
                               -1, &q, nullptr),
            SQLITE_OK);
  ASSERT_EQ(sqlite3_step(q), SQLITE_ROW);
  EXPECT_STREQ(reinterpret_cast<const char*>(sqlite3_column_text(q, 0)),
               "busbw_gbps > 0.5 * link_gbps");
  EXPECT_STREQ(reinterpret_cast<const char*>(sqlite3_column_text(q, 1)), "fail");
  EXPECT_DOUBLE_EQ(sqlite3_column_double(q, 2), 0.25);
  EXPECT_DOUBLE_EQ(sqlite3_column_double(q, 3), 0.5);
  EXPECT_EQ(sqlite3_step(q), SQLITE_DONE);
  sqlite3_finalize(q);
  sqlite3_close(db);
}

TEST(History, BisectionStepsAreKeptUntilForgotten) {
  TempDb tmp;
  {
    History h = History::open(tmp.path);
    h.begin_bisect({.id = "b1",
                    .suite_file = "s.yaml",
                    .candidates = {"400", "320", "240"},
                    .apply = "tc {candidate}",
                    .started_at = "2026-11-22T00:00:00Z",
                    .finished_at = {},
                    .first_bad = {}});
    h.record_bisect_step("b1",
                         {.step = 1, .index = 1, .candidate = "320", .run_id = "r1", .bad = true});
  }
  History h = History::open(tmp.path);  // a new process: the steps are there
  h.begin_bisect({.id = "b1",
                  .suite_file = "other",
                  .candidates = {},
                  .apply = {},
                  .started_at = {},
                  .finished_at = {},
                  .first_bad = {}});  // no-op
  const auto b = h.bisect("b1");
  ASSERT_TRUE(b);
  EXPECT_EQ(b->suite_file, "s.yaml");
  EXPECT_EQ(b->candidates, (std::vector<std::string>{"400", "320", "240"}));
  const auto steps = h.bisect_steps("b1");
  ASSERT_EQ(steps.size(), 1u);
  EXPECT_EQ(steps[0].candidate, "320");
  EXPECT_TRUE(steps[0].bad);
  h.finish_bisect("b1", "320", "2026-11-22T01:00:00Z");
  EXPECT_EQ(h.bisect("b1")->first_bad, "320");
  h.forget_bisect("b1");
  EXPECT_FALSE(h.bisect("b1"));
  EXPECT_TRUE(h.bisect_steps("b1").empty());
}

}  // namespace
}  // namespace rocehil::reports
