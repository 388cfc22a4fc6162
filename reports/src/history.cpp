#include "rocehil/reports/history.hpp"

#include <fmt/format.h>
#include <sqlite3.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <vector>

#include "rocehil/common/error.hpp"
#include "rocehil/reports/repeats.hpp"
#include "rocehil/reports/run_kind.hpp"

namespace rocehil::reports {

namespace {

// 1: the first. 2: runs.kind, only_glob, set_list (run_kind.hpp); a schema 1 database is
// migrated in place when opened, each run's kind read from its command line.
constexpr int schema_version = 2;
constexpr const char* schema = R"sql(
CREATE TABLE IF NOT EXISTS runs (
  run_id TEXT PRIMARY KEY, started_at TEXT, finished_at TEXT, suite TEXT, suite_file TEXT,
  suite_hash TEXT, inventory_file TEXT, inventory_hash TEXT, rocehil_version TEXT,
  command_line TEXT, settings TEXT, exit_code INTEGER, interrupted INTEGER,
  kind TEXT NOT NULL DEFAULT 'unknown', only_glob TEXT NOT NULL DEFAULT '',
  set_list TEXT NOT NULL DEFAULT '[]');
CREATE TABLE IF NOT EXISTS cases (
  run_id TEXT, case_id TEXT, position INTEGER, test TEXT, workload TEXT, outcome TEXT,
  PRIMARY KEY (run_id, case_id));
CREATE TABLE IF NOT EXISTS verdicts (
  run_id TEXT, case_id TEXT, repeat INTEGER, threshold TEXT, level TEXT, verdict TEXT,
  measured REAL, limit_value REAL, detail TEXT);
CREATE INDEX IF NOT EXISTS verdicts_by_case ON verdicts (run_id, case_id);
CREATE TABLE IF NOT EXISTS samples (
  run_id TEXT, case_id TEXT, repeat INTEGER, metric TEXT, value REAL,
  PRIMARY KEY (run_id, case_id, repeat, metric));
CREATE TABLE IF NOT EXISTS bisects (
  bisect_id TEXT PRIMARY KEY, suite_file TEXT, candidates TEXT, apply TEXT, started_at TEXT,
  finished_at TEXT, first_bad TEXT);
CREATE TABLE IF NOT EXISTS bisect_steps (
  bisect_id TEXT, step INTEGER, candidate_index INTEGER, candidate TEXT, run_id TEXT, bad INTEGER,
  PRIMARY KEY (bisect_id, step));
)sql";

// One prepared statement, finalized however the scope ends.
class Statement {
 public:
  Statement(sqlite3* db, const char* sql, const std::string& path) : db_(db), path_(path) {
    if (sqlite3_prepare_v2(db, sql, -1, &stmt_, nullptr) != SQLITE_OK) fail("prepare");
  }
  ~Statement() { sqlite3_finalize(stmt_); }
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  Statement& bind(int i, const std::string& text) {
    if (sqlite3_bind_text(stmt_, i, text.c_str(), static_cast<int>(text.size()),
                          SQLITE_TRANSIENT) != SQLITE_OK)
      fail("bind");
    return *this;
  }
  Statement& bind(int i, std::int64_t v) {
    if (sqlite3_bind_int64(stmt_, i, v) != SQLITE_OK) fail("bind");
    return *this;
  }
  Statement& bind(int i, double v) {
    if (sqlite3_bind_double(stmt_, i, v) != SQLITE_OK) fail("bind");
    return *this;
  }
  Statement& bind_null(int i) {
    if (sqlite3_bind_null(stmt_, i) != SQLITE_OK) fail("bind");
    return *this;
  }
  // True while there is a row.
  bool step() {
    const int rc = sqlite3_step(stmt_);
    if (rc == SQLITE_ROW) return true;
    if (rc != SQLITE_DONE) fail("step");
    return false;
  }
  void run() {
    step();
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
  }
  std::string text(int i) const {
    const auto* p = sqlite3_column_text(stmt_, i);
    return p ? reinterpret_cast<const char*>(p) : "";
  }
  bool is_null(int i) const { return sqlite3_column_type(stmt_, i) == SQLITE_NULL; }
  std::int64_t integer(int i) const { return sqlite3_column_int64(stmt_, i); }
  double real(int i) const { return sqlite3_column_double(stmt_, i); }

 private:
  [[noreturn]] void fail(const char* what) const {
    throw Error(ExitCode::infrastructure,
                fmt::format("history {}: {} failed: {}", path_, what, sqlite3_errmsg(db_)));
  }
  sqlite3* db_;
  const std::string& path_;
  sqlite3_stmt* stmt_ = nullptr;
};

void exec(sqlite3* db, const char* sql, const std::string& path) {
  char* message = nullptr;
  if (sqlite3_exec(db, sql, nullptr, nullptr, &message) != SQLITE_OK) {
    const std::string why = message ? message : sqlite3_errmsg(db);
    sqlite3_free(message);
    throw Error(ExitCode::infrastructure, fmt::format("history {}: {}", path, why));
  }
}

}  // namespace

History History::open(const std::string& path) {
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr) !=
      SQLITE_OK) {
    const std::string why = db ? sqlite3_errmsg(db) : "out of memory";
    sqlite3_close(db);
    throw Error(ExitCode::bad_input,
                fmt::format("cannot open the run history {}: {} (give another path)", path, why));
  }
  History h(db, path);
  sqlite3_busy_timeout(db, 5000);  // two runs finishing together wait for each other
  int version = 0;
  {
    Statement q(db, "PRAGMA user_version", h.path_);
    if (q.step()) version = static_cast<int>(q.integer(0));
  }
  if (version > schema_version)
    throw Error(ExitCode::bad_input,
                fmt::format("the run history {} has schema version {}, newer than this rocehil's "
                            "{} (use a newer rocehil, or another --history)",
                            path, version, schema_version));
  if (version < schema_version) h.upgrade();
  return h;
}

// Creates the tables, or brings an older schema's up to this one, in one transaction: two runs
// opening an old history together migrate it once (the second finds it done).
void History::upgrade() {
  exec(db_, "BEGIN IMMEDIATE", path_);
  try {
    exec(db_, schema, path_);
    bool has_kind = false;
    {
      Statement q(db_, "SELECT COUNT(*) FROM pragma_table_info('runs') WHERE name = 'kind'", path_);
      has_kind = q.step() && q.integer(0) > 0;
    }
    if (!has_kind) migrate_kinds();
    exec(db_, fmt::format("PRAGMA user_version = {}", schema_version).c_str(), path_);
    exec(db_, "COMMIT", path_);
  } catch (...) {
    sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
    throw;
  }
}

// Schema 1 kept no kind. What can be known is read back: a run a bisection recorded as one of
// its steps is a bisect step; otherwise its command line says (rocehil run --only/--set,
// bisect, selftest, calibrate); a run recorded by anything else stays unknown, counted as full.
void History::migrate_kinds() {
  exec(db_,
       "ALTER TABLE runs ADD COLUMN kind TEXT NOT NULL DEFAULT 'unknown'; "
       "ALTER TABLE runs ADD COLUMN only_glob TEXT NOT NULL DEFAULT ''; "
       "ALTER TABLE runs ADD COLUMN set_list TEXT NOT NULL DEFAULT '[]';",
       path_);
  struct Old {
    std::string run_id;
    RunKindInfo kind;
  };
  std::vector<Old> old;
  {
    Statement q(db_,
                "SELECT run_id, command_line, run_id IN (SELECT run_id FROM bisect_steps) "
                "FROM runs",
                path_);
    while (q.step()) {
      RunKindInfo kind = kind_from_command_line(q.text(1));
      if (q.integer(2) != 0) kind.kind = RunKind::bisect;
      old.push_back({q.text(0), std::move(kind)});
    }
  }
  Statement u(db_, "UPDATE runs SET kind = ?, only_glob = ?, set_list = ? WHERE run_id = ?", path_);
  for (const Old& o : old) {
    u.bind(1, std::string(to_string(o.kind.kind))).bind(2, o.kind.only);
    u.bind(3, nlohmann::json(o.kind.set).dump()).bind(4, o.run_id).run();
  }
}

History::History(History&& other) noexcept : db_(other.db_), path_(std::move(other.path_)) {
  other.db_ = nullptr;
}

History::~History() {
  if (db_ != nullptr) sqlite3_close(db_);
}

namespace {

void bind_optional(Statement& s, int i, const std::optional<double>& v) {
  if (v && std::isfinite(*v))
    s.bind(i, *v);
  else
    s.bind_null(i);
}

}  // namespace

void History::record(const RunRecord& run) {
  exec(db_, "BEGIN IMMEDIATE", path_);
  try {
    for (const char* table : {"runs", "cases", "verdicts", "samples"}) {
      const std::string sql = fmt::format("DELETE FROM {} WHERE run_id = ?", table);
      Statement(db_, sql.c_str(), path_).bind(1, run.run_id).run();
    }
    nlohmann::json settings = nlohmann::json::object();
    for (const auto& [name, value] : settings_of(run)) settings[name] = value;
    Statement r(db_,
                "INSERT INTO runs (run_id, started_at, finished_at, suite, suite_file, "
                "suite_hash, inventory_file, inventory_hash, rocehil_version, command_line, "
                "settings, exit_code, interrupted, kind, only_glob, set_list) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                path_);
    r.bind(1, run.run_id).bind(2, run.started_at).bind(3, run.finished_at);
    r.bind(4, run.suite_name).bind(5, run.suite_file).bind(6, content_hash(run.suite_text));
    r.bind(7, run.inventory_file).bind(8, content_hash(run.inventory_text));
    r.bind(9, run.rocehil_version).bind(10, run.command_line).bind(11, settings.dump());
    if (run.exit_code)
      r.bind(12, static_cast<std::int64_t>(*run.exit_code));
    else
      r.bind_null(12);
    r.bind(13, static_cast<std::int64_t>(run.interrupted ? 1 : 0));
    r.bind(14, std::string(to_string(run.kind.kind))).bind(15, run.kind.only);
    r.bind(16, nlohmann::json(run.kind.set).dump()).run();
    Statement c(db_, "INSERT INTO cases VALUES (?, ?, ?, ?, ?, ?)", path_);
    Statement v(db_, "INSERT INTO verdicts VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", path_);
    Statement s(db_, "INSERT INTO samples VALUES (?, ?, ?, ?, ?)", path_);
    for (std::size_t position = 0; position < run.cases.size(); ++position) {
      const CaseRecord& k = run.cases[position];
      c.bind(1, run.run_id).bind(2, k.id).bind(3, static_cast<std::int64_t>(position));
      c.bind(4, k.test).bind(5, k.workload);
      c.bind(6, std::string(suites::to_string(k.outcome))).run();
      // A repeat's sample is its final attempt, and only when it measured something.
      for (const Attempt* final : final_attempts(k)) {
        const Attempt& a = *final;
        if (a.grade)
          for (const auto& t : a.grade->results) {
            v.bind(1, run.run_id).bind(2, k.id).bind(3, static_cast<std::int64_t>(a.repeat));
            v.bind(4, t.threshold).bind(5, std::string(suites::to_string(t.level)));
            v.bind(6, std::string(suites::to_string(t.evaluation.verdict)));
            bind_optional(v, 7, t.evaluation.measured);
            bind_optional(v, 8, t.evaluation.limit);
            v.bind(9, t.evaluation.detail).run();
          }
        if (a.error) continue;
        for (const auto& [metric, value] : a.metrics) {
          if (!std::isfinite(value)) continue;
          s.bind(1, run.run_id).bind(2, k.id).bind(3, static_cast<std::int64_t>(a.repeat));
          s.bind(4, metric).bind(5, value).run();
        }
      }
    }
    exec(db_, "COMMIT", path_);
  } catch (...) {
    sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
    throw;
  }
}

namespace {

// "r.kind IN ('full', 'unknown')": the names are this file's own constants, never input.
std::string kind_clause(const RunKinds& kinds) {
  if (kinds == RunKinds::all()) return "1";
  std::string in;
  for (const RunKind k : kinds.list())
    in += fmt::format("{}'{}'", in.empty() ? "" : ", ", to_string(k));
  return in.empty() ? "0" : fmt::format("r.kind IN ({})", in);
}

RunKindInfo kind_info(const std::string& kind, std::string only, const std::string& set_list) {
  RunKindInfo info{
      .kind = parse_run_kind(kind).value_or(RunKind::unknown), .only = std::move(only), .set = {}};
  const auto set = nlohmann::json::parse(set_list, nullptr, /*allow_exceptions=*/false);
  if (set.is_array())
    for (const auto& a : set)
      if (a.is_string()) info.set.push_back(a.get<std::string>());
  return info;
}

}  // namespace

std::vector<History::RunRow> History::runs(const std::optional<std::string>& suite, int last,
                                           bool headlines, const RunKinds& kinds) const {
  return query_runs(suite, std::nullopt, last, headlines, kinds);
}

std::optional<std::string> History::last_qualified(const std::string& suite,
                                                   const RunKinds& kinds) const {
  const std::string sql = fmt::format(
      "SELECT r.run_id FROM runs r WHERE r.suite = ? AND r.exit_code = 0 AND r.interrupted = 0 "
      "AND {} ORDER BY r.started_at DESC, r.run_id DESC LIMIT 1",
      kind_clause(kinds));
  Statement q(db_, sql.c_str(), path_);
  q.bind(1, suite);
  if (q.step()) return q.text(0);
  return std::nullopt;
}

std::vector<History::RunRow> History::query_runs(const std::optional<std::string>& suite,
                                                 const std::optional<std::string>& run_id, int last,
                                                 bool headlines, const RunKinds& kinds) const {
  const std::string sql = fmt::format(
      "SELECT r.run_id, r.started_at, r.suite, r.exit_code, r.interrupted, "
      "COUNT(c.case_id), "
      "SUM(c.outcome IN ('pass', 'warn', 'expected_fail')), "
      "SUM(c.outcome IN ('fail', 'unexpected_pass')), "
      "SUM(c.outcome = 'error'), SUM(c.outcome = 'not_run'), SUM(c.outcome = 'skipped'), "
      "r.kind, r.only_glob, r.set_list "
      "FROM runs r LEFT JOIN cases c ON c.run_id = r.run_id "
      "WHERE (?1 IS NULL OR r.suite = ?1) AND (?3 IS NULL OR r.run_id = ?3) AND {} "
      "GROUP BY r.run_id ORDER BY r.started_at DESC, r.run_id DESC LIMIT ?2",
      kind_clause(kinds));
  Statement q(db_, sql.c_str(), path_);
  if (suite)
    q.bind(1, *suite);
  else
    q.bind_null(1);
  q.bind(2, static_cast<std::int64_t>(last));
  if (run_id)
    q.bind(3, *run_id);
  else
    q.bind_null(3);
  std::vector<RunRow> out;
  while (q.step()) {
    RunRow row;
    row.run_id = q.text(0);
    row.started_at = q.text(1);
    row.suite = q.text(2);
    if (!q.is_null(3)) row.exit_code = static_cast<int>(q.integer(3));
    row.interrupted = q.integer(4) != 0;
    row.cases = static_cast<int>(q.integer(5));
    row.passed = static_cast<int>(q.integer(6));
    row.failed = static_cast<int>(q.integer(7));
    row.errors = static_cast<int>(q.integer(8));
    row.not_run = static_cast<int>(q.integer(9));
    row.skipped = static_cast<int>(q.integer(10));
    row.kind = kind_info(q.text(11), q.text(12), q.text(13));
    out.push_back(std::move(row));
  }
  if (headlines)
    for (RunRow& row : out) row.headline = headline(row.run_id);
  return out;
}

History::Headline History::headline(const std::string& run_id) const {
  Statement q(db_,
              "SELECT case_id, metric, value FROM samples WHERE run_id = ? AND metric IN "
              "('busbw_gbps', 'lat_p99_us', 'cnps', 'pfc_storms') ORDER BY case_id, metric",
              path_);
  q.bind(1, run_id);
  // case -> metric -> its repeats' values
  std::map<std::string, std::map<std::string, std::vector<double>>> repeats;
  while (q.step()) repeats[q.text(0)][q.text(1)].push_back(q.real(2));
  Headline h;
  const auto keep = [](std::optional<double>& slot, double v, auto better) {
    slot = slot ? better(*slot, v) : v;
  };
  const auto lowest = [](double a, double b) { return std::min(a, b); };
  const auto highest = [](double a, double b) { return std::max(a, b); };
  const auto sum = [](double a, double b) { return a + b; };
  for (const auto& [case_id, metrics] : repeats)
    for (const auto& [metric, values] : metrics) {
      // A case counts by the median of its repeats, the number every other view shows of it.
      const auto s = spread_of(values);
      if (!s) continue;
      if (metric == "busbw_gbps") keep(h.busbw_gbps, s->median, lowest);
      if (metric == "lat_p99_us") keep(h.lat_p99_us, s->median, highest);
      if (metric == "cnps") keep(h.cnps, s->median, sum);
      if (metric == "pfc_storms") keep(h.pfc_storms, s->median, sum);
    }
  return h;
}

std::string History::resolve(const std::string& prefix) const {
  Statement q(db_,
              "SELECT run_id FROM runs WHERE run_id = ?1 OR substr(run_id, 1, length(?1)) = ?1 "
              "ORDER BY run_id = ?1 DESC, run_id LIMIT 3",
              path_);
  q.bind(1, prefix);
  std::vector<std::string> found;
  while (q.step()) found.push_back(q.text(0));
  if (!found.empty() && found[0] == prefix) return prefix;
  if (found.size() == 1) return found[0];
  if (found.empty())
    throw Error(
        ExitCode::bad_input,
        fmt::format("no run '{}' in the history {} (rocehil history lists them)", prefix, path_));
  throw Error(ExitCode::bad_input,
              fmt::format("'{}' names more than one run in {} ({}, {}, ...): give more of the id",
                          prefix, path_, found[0], found[1]));
}

History::RunSnapshot History::snapshot(const std::string& run_id) const {
  RunSnapshot out;
  const std::string id = resolve(run_id);
  for (RunRow& row : query_runs(std::nullopt, id, 1)) out.row = std::move(row);
  {
    Statement q(db_,
                "SELECT finished_at, suite_file, inventory_file, rocehil_version "
                "FROM runs WHERE run_id = ?",
                path_);
    q.bind(1, id);
    if (q.step()) {
      out.finished_at = q.text(0);
      out.suite_file = q.text(1);
      out.inventory_file = q.text(2);
      out.rocehil_version = q.text(3);
    }
  }
  out.settings = recorded_settings(id);
  {
    Statement q(db_,
                "SELECT case_id, test, workload, outcome FROM cases WHERE run_id = ? "
                "ORDER BY position",
                path_);
    q.bind(1, id);
    while (q.step()) out.cases.push_back({q.text(0), q.text(1), q.text(2), q.text(3)});
  }
  Statement q(db_, "SELECT case_id, metric, value FROM samples WHERE run_id = ? ORDER BY repeat",
              path_);
  q.bind(1, id);
  while (q.step()) out.samples[q.text(0)][q.text(1)].push_back(q.real(2));
  return out;
}

History::RunValues History::values(const std::string& run_id,
                                   const std::vector<std::string>& metrics) const {
  RunValues out;
  {
    Statement q(db_, "SELECT case_id FROM cases WHERE run_id = ? ORDER BY position", path_);
    q.bind(1, run_id);
    while (q.step()) out.cases.push_back(q.text(0));
  }
  std::string sql = "SELECT case_id, metric, value FROM samples WHERE run_id = ?";
  if (!metrics.empty()) {
    sql += " AND metric IN (";
    for (std::size_t i = 0; i < metrics.size(); ++i) sql += i == 0 ? "?" : ", ?";
    sql += ")";
  }
  sql += " ORDER BY repeat";
  Statement q(db_, sql.c_str(), path_);
  q.bind(1, run_id);
  for (std::size_t i = 0; i < metrics.size(); ++i) q.bind(static_cast<int>(i + 2), metrics[i]);
  while (q.step()) out.samples[q.text(0)][q.text(1)].push_back(q.real(2));
  return out;
}

Settings History::recorded_settings(const std::string& run_id) const {
  Settings out;
  Statement q(db_, "SELECT settings FROM runs WHERE run_id = ?", path_);
  q.bind(1, run_id);
  if (q.step()) {
    const auto settings = nlohmann::json::parse(q.text(0), nullptr, /*allow_exceptions=*/false);
    if (settings.is_object())
      for (const auto& [name, value] : settings.items())
        if (value.is_string()) out[name] = value.get<std::string>();
  }
  return out;
}

std::vector<double> History::samples(const std::string& run_id, const std::string& case_id,
                                     const std::string& metric) const {
  Statement q(db_,
              "SELECT value FROM samples WHERE run_id = ? AND case_id = ? AND metric = ? "
              "ORDER BY repeat",
              path_);
  q.bind(1, run_id).bind(2, case_id).bind(3, metric);
  std::vector<double> out;
  while (q.step()) out.push_back(q.real(0));
  return out;
}

void History::begin_bisect(const BisectRecord& b) {
  nlohmann::json candidates = b.candidates;
  Statement q(db_, "INSERT OR IGNORE INTO bisects VALUES (?, ?, ?, ?, ?, NULL, NULL)", path_);
  q.bind(1, b.id).bind(2, b.suite_file).bind(3, candidates.dump()).bind(4, b.apply);
  q.bind(5, b.started_at).run();
}

void History::forget_bisect(const std::string& id) {
  for (const char* table : {"bisects", "bisect_steps"}) {
    const std::string sql = fmt::format("DELETE FROM {} WHERE bisect_id = ?", table);
    Statement(db_, sql.c_str(), path_).bind(1, id).run();
  }
}

std::optional<History::BisectRecord> History::bisect(const std::string& id) const {
  Statement q(db_,
              "SELECT suite_file, candidates, apply, started_at, finished_at, first_bad "
              "FROM bisects WHERE bisect_id = ?",
              path_);
  q.bind(1, id);
  if (!q.step()) return std::nullopt;
  BisectRecord b{.id = id,
                 .suite_file = q.text(0),
                 .candidates = {},
                 .apply = q.text(2),
                 .started_at = q.text(3),
                 .finished_at = q.text(4),
                 .first_bad = q.text(5)};
  const auto candidates = nlohmann::json::parse(q.text(1), nullptr, /*allow_exceptions=*/false);
  if (candidates.is_array())
    for (const auto& c : candidates)
      if (c.is_string()) b.candidates.push_back(c.get<std::string>());
  return b;
}

std::vector<History::BisectStep> History::bisect_steps(const std::string& id) const {
  Statement q(db_,
              "SELECT step, candidate_index, candidate, run_id, bad FROM bisect_steps "
              "WHERE bisect_id = ? ORDER BY step",
              path_);
  q.bind(1, id);
  std::vector<BisectStep> out;
  while (q.step())
    out.push_back({.step = static_cast<int>(q.integer(0)),
                   .index = static_cast<std::size_t>(q.integer(1)),
                   .candidate = q.text(2),
                   .run_id = q.text(3),
                   .bad = q.integer(4) != 0});
  return out;
}

void History::record_bisect_step(const std::string& id, const BisectStep& step) {
  Statement q(db_, "INSERT OR REPLACE INTO bisect_steps VALUES (?, ?, ?, ?, ?, ?)", path_);
  q.bind(1, id).bind(2, static_cast<std::int64_t>(step.step));
  q.bind(3, static_cast<std::int64_t>(step.index)).bind(4, step.candidate).bind(5, step.run_id);
  q.bind(6, static_cast<std::int64_t>(step.bad ? 1 : 0)).run();
}

void History::finish_bisect(const std::string& id, const std::string& first_bad,
                            const std::string& finished_at) {
  Statement q(db_, "UPDATE bisects SET first_bad = ?, finished_at = ? WHERE bisect_id = ?", path_);
  q.bind(1, first_bad).bind(2, finished_at).bind(3, id).run();
}

}  // namespace rocehil::reports
