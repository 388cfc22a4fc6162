#include "rocehil/reports/history.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <map>

#include <fmt/format.h>

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
  ASSERT_EQ(sqlite3_exec(db, "PRAGMA user_version = 3", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(db);
  try {
    History::open(tmp.path);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("schema version 3, newer than this rocehil's 2"),
              std::string::npos)
        << e.what();
  }
}

// A run of `suite` started at `hour` that exited `exit_code`, of `kind`.
RunRecord run_at(int hour, std::string suite, int exit_code, RunKindInfo kind) {
  RunRecord run = testing::sample_run();
  run.run_id = fmt::format("20261122T{:02}0000Z-{}", hour, suite);
  run.started_at = fmt::format("2026-11-22T{:02}:00:00Z", hour);
  run.suite_name = std::move(suite);
  run.exit_code = exit_code;
  run.interrupted = false;
  run.kind = std::move(kind);
  return run;
}

TEST(History, EachRunKeepsItsKindAndTheListingFiltersByKind) {
  TempDb tmp;
  {
    History h = History::open(tmp.path);
    h.record(run_at(1, "nightly", 0, {}));
    h.record(run_at(2, "nightly", 0, kind_of_run(RunKind::full, "p2p*", {"roce_rp.rpg_gd=9"})));
    h.record(run_at(3, "nightly", 0, kind_of_run(RunKind::bisect, "", {"switch.x=250"})));
    h.record(run_at(4, "nightly", 1, kind_of_run(RunKind::full, "", {"roce_rp.rpg_gd=9"})));
  }
  const History h = History::open(tmp.path);
  const auto all = h.runs(std::string("nightly"), 10);
  ASSERT_EQ(all.size(), 4u);  // by default every kind, as before kinds were kept
  EXPECT_EQ(all[3].kind, (RunKindInfo{.kind = RunKind::full, .only = {}, .set = {}}));
  EXPECT_EQ(all[2].kind,
            (RunKindInfo{.kind = RunKind::only, .only = "p2p*", .set = {"roce_rp.rpg_gd=9"}}));
  EXPECT_EQ(all[1].kind.kind, RunKind::bisect);
  EXPECT_EQ(all[1].kind.set, std::vector<std::string>{"switch.x=250"});
  EXPECT_EQ(all[0].kind.kind, RunKind::set);
  const auto full = h.runs(std::string("nightly"), 10, false, RunKinds::full_runs());
  ASSERT_EQ(full.size(), 1u);
  EXPECT_EQ(full[0].run_id, "20261122T010000Z-nightly");
  const auto partial = h.runs(std::nullopt, 10, false, {RunKind::only, RunKind::set});
  ASSERT_EQ(partial.size(), 2u);
  EXPECT_EQ(partial[0].run_id, "20261122T040000Z-nightly");
  EXPECT_TRUE(h.runs(std::nullopt, 10, false, RunKinds{}).empty());
  EXPECT_EQ(h.snapshot("20261122T02").row.kind.kind, RunKind::only);
}

// The night a one-case bisect step became the nightly's baseline: last-qualified takes the
// newest full run that exited 0, never a bisect step, an --only or a --set run after it.
TEST(History, LastQualifiedIsTheNewestFullRunThatExitedZero) {
  TempDb tmp;
  History h = History::open(tmp.path);
  h.record(run_at(1, "nightly", 0, {}));
  h.record(run_at(2, "nightly", 1, {}));        // failed
  h.record(run_at(3, "other", 0, {}));          // another suite
  RunRecord cut = run_at(4, "nightly", 0, {});  // exit 0, but interrupted
  cut.interrupted = true;
  h.record(cut);
  h.record(run_at(5, "nightly", 0, kind_of_run(RunKind::full, "p2p_bw", {})));
  h.record(run_at(6, "nightly", 0, kind_of_run(RunKind::full, "", {"roce_rp.rpg_gd=9"})));
  h.record(run_at(7, "nightly", 0, kind_of_run(RunKind::bisect, "incast*", {"switch.x=250"})));
  h.record(run_at(8, "nightly", 0, kind_of_run(RunKind::selftest, "", {})));
  EXPECT_EQ(h.last_qualified("nightly"), "20261122T010000Z-nightly");
  EXPECT_EQ(h.last_qualified("nightly", RunKinds::all()), "20261122T080000Z-nightly");
  EXPECT_EQ(h.last_qualified("nightly", {RunKind::only}), "20261122T050000Z-nightly");
  EXPECT_FALSE(h.last_qualified("smoke"));
}

// A history written by the rocehil before kinds: schema 1, made here with its own SQL.
constexpr const char* schema_one_history = R"sql(
CREATE TABLE runs (
  run_id TEXT PRIMARY KEY, started_at TEXT, finished_at TEXT, suite TEXT, suite_file TEXT,
  suite_hash TEXT, inventory_file TEXT, inventory_hash TEXT, rocehil_version TEXT,
  command_line TEXT, settings TEXT, exit_code INTEGER, interrupted INTEGER);
CREATE TABLE cases (
  run_id TEXT, case_id TEXT, position INTEGER, test TEXT, workload TEXT, outcome TEXT,
  PRIMARY KEY (run_id, case_id));
CREATE TABLE verdicts (
  run_id TEXT, case_id TEXT, repeat INTEGER, threshold TEXT, level TEXT, verdict TEXT,
  measured REAL, limit_value REAL, detail TEXT);
CREATE TABLE samples (
  run_id TEXT, case_id TEXT, repeat INTEGER, metric TEXT, value REAL,
  PRIMARY KEY (run_id, case_id, repeat, metric));
CREATE TABLE bisects (
  bisect_id TEXT PRIMARY KEY, suite_file TEXT, candidates TEXT, apply TEXT, started_at TEXT,
  finished_at TEXT, first_bad TEXT);
CREATE TABLE bisect_steps (
  bisect_id TEXT, step INTEGER, candidate_index INTEGER, candidate TEXT, run_id TEXT, bad INTEGER,
  PRIMARY KEY (bisect_id, step));
INSERT INTO runs VALUES ('r1', '2026-11-20T01:00:00Z', '', 'nightly', 'n.yaml', '', 'f.yaml', '',
  '0.1', '''rocehil'' ''run'' ''n.yaml'' ''--inventory'' ''f.yaml''', '{}', 0, 0);
INSERT INTO runs VALUES ('r2', '2026-11-20T02:00:00Z', '', 'nightly', 'n.yaml', '', 'f.yaml', '',
  '0.1', '''rocehil'' ''run'' ''n.yaml'' ''--only'' ''p2p*'' ''--set'' ''a.b=1''', '{}', 0, 0);
INSERT INTO runs VALUES ('r3', '2026-11-20T03:00:00Z', '', 'nightly', 'n.yaml', '', 'f.yaml', '',
  '0.1', 'rocehil bisect ... (step 1, candidate ''250'')', '{}', 0, 0);
INSERT INTO runs VALUES ('r4', '2026-11-20T04:00:00Z', '', 'nightly', 'n.yaml', '', 'f.yaml', '',
  '0.1', 'whatever the harness said', '{}', 0, 0);
INSERT INTO runs VALUES ('r5', '2026-11-20T05:00:00Z', '', 'nightly', 'n.yaml', '', 'f.yaml', '',
  '0.1', '''rocehil'' ''run'' ''n.yaml'' ''--only'' ''incast*''', '{}', 0, 0);
INSERT INTO cases VALUES ('r1', 'p2p_bw', 0, 'p2p_bw', 'bw', 'pass');
INSERT INTO samples VALUES ('r1', 'p2p_bw', 0, 'busbw_gbps', 9.5);
INSERT INTO bisect_steps VALUES ('b1', 1, 2, '250', 'r5', 0);
PRAGMA user_version = 1;
)sql";

TEST(History, ASchemaOneHistoryIsMigratedInPlaceWithTheKindsItsRunsHad) {
  TempDb tmp;
  {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(tmp.path.c_str(), &db), SQLITE_OK);
    char* why = nullptr;
    const int rc = sqlite3_exec(db, schema_one_history, nullptr, nullptr, &why);
    ASSERT_EQ(rc, SQLITE_OK) << why;
    sqlite3_close(db);
  }
  History h = History::open(tmp.path);
  const auto rows = h.runs(std::nullopt, 10);
  ASSERT_EQ(rows.size(), 5u);
  std::map<std::string, RunKindInfo> kinds;
  for (const auto& r : rows) kinds[r.run_id] = r.kind;
  EXPECT_EQ(kinds["r1"], (RunKindInfo{.kind = RunKind::full, .only = {}, .set = {}}));
  EXPECT_EQ(kinds["r2"], (RunKindInfo{.kind = RunKind::only, .only = "p2p*", .set = {"a.b=1"}}));
  EXPECT_EQ(kinds["r3"].kind, RunKind::bisect);
  EXPECT_EQ(kinds["r4"].kind, RunKind::unknown);
  // Its command line says --only, and a bisection recorded it as a step: a bisect step.
  EXPECT_EQ(kinds["r5"].kind, RunKind::bisect);
  EXPECT_EQ(kinds["r5"].only, "incast*");
  // Unknown counts as full: it was recorded as an ordinary run.
  EXPECT_EQ(h.last_qualified("nightly"), "r4");
  EXPECT_EQ(h.samples("r1", "p2p_bw", "busbw_gbps"), std::vector<double>{9.5});  // kept
  h.record(run_at(6, "nightly", 0, kind_of_run(RunKind::full, "", {"a.b=2"})));  // writable
  EXPECT_EQ(h.runs(std::string("nightly"), 1).at(0).kind.kind, RunKind::set);

  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(tmp.path.c_str(), &db), SQLITE_OK);
  sqlite3_stmt* q = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &q, nullptr), SQLITE_OK);
  ASSERT_EQ(sqlite3_step(q), SQLITE_ROW);
  EXPECT_EQ(sqlite3_column_int(q, 0), 2);
  sqlite3_finalize(q);
  sqlite3_close(db);
  History again = History::open(tmp.path);  // migrated once: opening it again changes nothing
  EXPECT_EQ(again.runs(std::nullopt, 10).size(), 6u);
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
