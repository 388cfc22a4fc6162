// Which run a suite run takes as its baseline, and what kind of run it records itself as: the
// baseline is chosen and the run's record begun before any host is reached, so a run whose
// agents cannot start (the preflight fails) shows both without a fabric.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "rocehil/common/error.hpp"
#include "rocehil/reports/history.hpp"
#include "rocehil/run/suite_run.hpp"

namespace rocehil::run {
namespace {

namespace fs = std::filesystem;

class BaselineRecorder final : public RunEvents {
 public:
  std::string baseline, asked;
  std::vector<std::string> lacking;
  reports::RunKindInfo lacking_kind;
  void baseline_chosen(const std::string& run_id, const std::string& a,
                       const std::string&) override {
    baseline = run_id;
    asked = a;
  }
  void baseline_lacks_cases(const std::string&, const reports::RunKindInfo& kind,
                            const std::vector<std::string>& cases) override {
    lacking_kind = kind;
    lacking = cases;
  }
};

// The nightly suite: two cases, each held to the baseline's busbw.
constexpr const char* nightly_suite = R"(schema_version: 1
name: nightly
defaults: {provider: soft, hosts: all}
tests:
  - name: p2p
    workload: bw
    size: 4K
    duration_s: 1
    thresholds:
      - busbw_gbps >= 0.9 * baseline.busbw_gbps
  - name: p2p_lat
    workload: bw
    size: 8
    duration_s: 1
    thresholds:
      - busbw_gbps >= 0.9 * baseline.busbw_gbps
)";

class BaselineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("rocehil-baseline-" + std::to_string(getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "reports");
    o_.suite_file = write("nightly.yaml", nightly_suite);
    o_.inventory_file = write("inventory.yaml", R"(schema_version: 1
name: here
defaults:
  launcher: local
  provider: soft
  agent: /nonexistent/rocehil
hosts:
  - {name: a, address: 127.0.0.1, nics: [{netdev: lo, ip: 127.0.0.1}]}
  - {name: b, address: 127.0.0.2, nics: [{netdev: lo, ip: 127.0.0.2}]}
)");
    o_.reports_dir = (dir_ / "reports").string();
    // A full nightly that qualified at 01:00, then a one-case bisect step and an --only run
    // that qualified after it.
    reports::History h = reports::History::open(history());
    h.record(recorded("20261122T010000Z-nightly", 1, {"p2p", "p2p_lat"}, {}));
    h.record(recorded(
        "20261122T030000Z-nightly", 3, {"p2p"},
        reports::kind_of_run(reports::RunKind::bisect, "p2p", {"switch.ecn_mark_mbps=250"})));
    h.record(recorded("20261122T040000Z-nightly", 4, {"p2p_lat"},
                      reports::kind_of_run(reports::RunKind::full, "p2p_lat", {})));
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string write(const std::string& name, const std::string& text) {
    const auto path = dir_ / name;
    std::ofstream(path) << text;
    return path.string();
  }
  std::string history() const { return (dir_ / "reports" / "history.db").string(); }

  static reports::RunRecord recorded(std::string id, int hour, std::vector<std::string> cases,
                                     reports::RunKindInfo kind) {
    reports::RunRecord r;
    r.run_id = std::move(id);
    r.started_at = "2026-11-22T0" + std::to_string(hour) + ":00:00Z";
    r.suite_name = "nightly";
    r.exit_code = 0;
    r.kind = std::move(kind);
    for (auto& c : cases) {
      reports::CaseRecord k;
      k.id = k.test = std::move(c);
      reports::Attempt a;
      a.metrics["busbw_gbps"] = 10.0 * hour;
      k.attempts.push_back(std::move(a));
      r.cases.push_back(std::move(k));
    }
    return r;
  }

  nlohmann::json run_json(const std::string& run_id) const {
    std::ifstream in(dir_ / "reports" / run_id / "run.json");
    return nlohmann::json::parse(in);
  }

  fs::path dir_;
  SuiteRunOptions o_;
  const std::atomic<bool> interrupt_{false};
  BaselineRecorder events_;
};

// The night the bisect step became the baseline: every case it did not run went ERROR.
TEST_F(BaselineTest, LastQualifiedIsTheNewestFullRunNotABisectStepOrAnOnlyRun) {
  o_.baseline = "last-qualified";
  std::string run_id;
  EXPECT_EQ(run_suite(o_, interrupt_, events_, &run_id), 3);  // no agent: the preflight fails
  EXPECT_EQ(events_.baseline, "20261122T010000Z-nightly");
  EXPECT_TRUE(events_.lacking.empty());
  const auto record = run_json(run_id);
  EXPECT_EQ(record["baseline"]["run_id"], "20261122T010000Z-nightly");
  EXPECT_EQ(record["baseline"]["kind"], "full");
  // Each case read the full run's value (10 x its hour).
  for (const auto& c : record["cases"])
    EXPECT_EQ(c["names"]["baseline.busbw_gbps"], 10.0) << c["id"];
}

TEST_F(BaselineTest, NoFullRunThatQualifiedIsRefusedSayingWhy) {
  reports::History h = reports::History::open(history());
  reports::RunRecord failed = recorded("20261122T010000Z-nightly", 1, {"p2p", "p2p_lat"}, {});
  failed.exit_code = 1;
  h.record(failed);  // replaces the full run that qualified
  o_.baseline = "last-qualified";
  try {
    run_suite(o_, interrupt_, events_);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), ExitCode::bad_input);
    EXPECT_NE(std::string(e.what()).find("holds no full run of suite 'nightly' that qualified "
                                         "(exit status 0; bisect steps and --only"),
              std::string::npos)
        << e.what();
    // The run that would have been taken before kinds were, and how to take it anyway.
    EXPECT_NE(std::string(e.what()).find("the newest that qualified, 20261122T040000Z-nightly, "
                                         "is an --only 'p2p_lat' run (give --baseline "
                                         "20261122T040000Z-nightly to take it"),
              std::string::npos)
        << e.what();
  }
}

// Named by id, a partial run is taken as asked, and the cases it lacks are said before they
// grade error.
TEST_F(BaselineTest, APartialRunNamedByIdIsTakenAndTheCasesItLacksAreSaid) {
  o_.baseline = "20261122T030000Z";
  std::string run_id;
  run_suite(o_, interrupt_, events_, &run_id);
  EXPECT_EQ(events_.baseline, "20261122T030000Z-nightly");
  EXPECT_EQ(events_.lacking, std::vector<std::string>{"p2p_lat"});
  EXPECT_EQ(events_.lacking_kind.kind, reports::RunKind::bisect);
  const auto record = run_json(run_id);
  EXPECT_EQ(record["baseline"]["kind"], "bisect");
  EXPECT_EQ(record["baseline"]["missing_cases"], nlohmann::json::array({"p2p_lat"}));
}

TEST_F(BaselineTest, ARunRecordsItsKindInRunJsonAndTheHistory) {
  o_.baseline = "last-qualified";
  o_.only = "p2p";
  std::string run_id;
  run_suite(o_, interrupt_, events_, &run_id);
  const auto record = run_json(run_id);
  EXPECT_EQ(record["kind"], "only");
  EXPECT_EQ(record["only"], "p2p");
  const auto rows = reports::History::open(history()).runs("nightly", 1);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].run_id, run_id);
  EXPECT_EQ(rows[0].kind.kind, reports::RunKind::only);

  o_.only.clear();
  o_.started_as = reports::RunKind::bisect;  // as bisect starts its steps
  run_suite(o_, interrupt_, events_, &run_id);
  EXPECT_EQ(run_json(run_id)["kind"], "bisect");
}

}  // namespace
}  // namespace rocehil::run
