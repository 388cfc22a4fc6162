#include "rocehil/reports/history.hpp"

#include <fmt/format.h>
#include <sqlite3.h>

#include <cmath>

#include "rocehil/common/error.hpp"

namespace rocehil::reports {

namespace {

constexpr const char* schema = R"sql(
CREATE TABLE IF NOT EXISTS runs (
  run_id TEXT PRIMARY KEY, started_at TEXT, finished_at TEXT, suite TEXT, suite_file TEXT,
  inventory_file TEXT, rocehil_version TEXT, exit_code INTEGER, interrupted INTEGER);
CREATE TABLE IF NOT EXISTS cases (
  run_id TEXT, case_id TEXT, test TEXT, workload TEXT, outcome TEXT,
  PRIMARY KEY (run_id, case_id));
CREATE TABLE IF NOT EXISTS samples (
  run_id TEXT, case_id TEXT, repeat INTEGER, metric TEXT, value REAL,
  PRIMARY KEY (run_id, case_id, repeat, metric));
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
  exec(db, schema, path);
  return h;
}

History::History(History&& other) noexcept : db_(other.db_), path_(std::move(other.path_)) {
  other.db_ = nullptr;
}

History::~History() {
  if (db_ != nullptr) sqlite3_close(db_);
}

void History::record(const RunRecord& run) {
  exec(db_, "BEGIN IMMEDIATE", path_);
  try {
    for (const char* table : {"runs", "cases", "samples"}) {
      const std::string sql = fmt::format("DELETE FROM {} WHERE run_id = ?", table);
      Statement(db_, sql.c_str(), path_).bind(1, run.run_id).run();
    }
    Statement r(db_, "INSERT INTO runs VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", path_);
    r.bind(1, run.run_id).bind(2, run.started_at).bind(3, run.finished_at);
    r.bind(4, run.suite_name).bind(5, run.suite_file).bind(6, run.inventory_file);
    r.bind(7, run.rocehil_version);
    if (run.exit_code)
      r.bind(8, static_cast<std::int64_t>(*run.exit_code));
    else
      r.bind_null(8);
    r.bind(9, static_cast<std::int64_t>(run.interrupted ? 1 : 0)).run();
    Statement c(db_, "INSERT INTO cases VALUES (?, ?, ?, ?, ?)", path_);
    Statement s(db_, "INSERT INTO samples VALUES (?, ?, ?, ?, ?)", path_);
    for (const CaseRecord& k : run.cases) {
      c.bind(1, run.run_id).bind(2, k.id).bind(3, k.test).bind(4, k.workload);
      c.bind(5, std::string(suites::to_string(k.outcome))).run();
      // A repeat's sample is its final attempt, and only when it measured something.
      for (std::size_t i = 0; i < k.attempts.size(); ++i) {
        const Attempt& a = k.attempts[i];
        const bool final = i + 1 == k.attempts.size() || k.attempts[i + 1].repeat != a.repeat;
        if (!final || a.error) continue;
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

std::vector<History::RunRow> History::runs(const std::optional<std::string>& suite,
                                           int last) const {
  Statement q(db_,
              "SELECT r.run_id, r.started_at, r.suite, r.exit_code, r.interrupted, "
              "COUNT(c.case_id), "
              "SUM(c.outcome IN ('pass', 'warn', 'expected_fail')), "
              "SUM(c.outcome IN ('fail', 'unexpected_pass')), "
              "SUM(c.outcome = 'error'), SUM(c.outcome = 'not_run') "
              "FROM runs r LEFT JOIN cases c ON c.run_id = r.run_id "
              "WHERE ?1 IS NULL OR r.suite = ?1 "
              "GROUP BY r.run_id ORDER BY r.started_at DESC, r.run_id DESC LIMIT ?2",
              path_);
  if (suite)
    q.bind(1, *suite);
  else
    q.bind_null(1);
  q.bind(2, static_cast<std::int64_t>(last));
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
    out.push_back(std::move(row));
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

}  // namespace rocehil::reports
