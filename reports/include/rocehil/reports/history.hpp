#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "rocehil/reports/run_record.hpp"

struct sqlite3;

namespace rocehil::reports {

// The run history (reports/history.db by default): every run's identity and outcome counts, each
// case's outcome, and every measured sample (metric values of each repeat's final attempt), so
// runs can be listed and compared. SQLite, one file; recording a run again replaces it.
class History {
 public:
  // Opens (creating when missing) the database and its tables. Throws rocehil::Error naming the
  // path and SQLite's reason.
  static History open(const std::string& path);
  ~History();
  History(History&& other) noexcept;
  History& operator=(History&&) = delete;
  History(const History&) = delete;
  History& operator=(const History&) = delete;

  void record(const RunRecord& run);

  struct RunRow {
    std::string run_id, started_at, suite;
    std::optional<int> exit_code;
    bool interrupted = false;
    int cases = 0, passed = 0, failed = 0, errors = 0, not_run = 0;
  };
  // The newest runs first, at most `last`; only the suite's when `suite` is set.
  std::vector<RunRow> runs(const std::optional<std::string>& suite, int last) const;

  // The values a metric took in a case of a run, one per repeat, in repeat order.
  std::vector<double> samples(const std::string& run_id, const std::string& case_id,
                              const std::string& metric) const;

 private:
  History(sqlite3* db, std::string path) : db_(db), path_(std::move(path)) {}
  sqlite3* db_ = nullptr;
  std::string path_;
};

}  // namespace rocehil::reports
