// `rocehil trend` over a long history: N nightly runs of a C-case suite (every case with the
// metrics a collective case records), recorded in a fresh SQLite history as `rocehil run` records
// them, with steps planted in some cases' busbw. Times reports::trend() over every case's
// headline, and, as the reference in the same command, the sqlite3 command-line tool reading
// the same values out of the same file (what no trend can do with less).
#include <fmt/format.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <random>

#include "rocehil/reports/history.hpp"
#include "rocehil/reports/trend.hpp"

namespace reports = rocehil::reports;
using Clock = std::chrono::steady_clock;

namespace {

reports::RunRecord night(int n, int cases, std::mt19937_64& random) {
  std::normal_distribution<double> jitter(0, 0.02);
  reports::RunRecord run;
  run.run_id = fmt::format("night{:04}-bench", n);
  run.started_at = fmt::format("2026-01-01T00:00:00Z+{:04}", n);  // sorts by night
  run.suite_name = "bench";
  for (int c = 0; c < cases; ++c) {
    reports::CaseRecord k;
    k.id = fmt::format("allreduce/case={}", c);
    k.test = "allreduce";
    k.workload = "allreduce";
    reports::Attempt a;
    // Every fifth case steps down 10% at night 200; every tenth up 20% at night 300.
    double level = 100;
    if (c % 5 == 0 && n >= 200) level *= 0.9;
    if (c % 10 == 0 && n >= 300) level *= 1.2;
    a.metrics["busbw_gbps"] = level * (1 + jitter(random));
    for (const char* m : {"algbw_gbps", "time_us", "time_p99_us", "time_cv", "retransmits",
                          "timeouts", "naks", "errors", "data_errors", "cnps", "cnp_per_s",
                          "nic_rx_bytes", "nic_tx_bytes", "switch_drops", "switch_errors"})
      a.metrics[m] = 1 + jitter(random);
    k.attempts.push_back(std::move(a));
    k.outcome = rocehil::suites::Outcome::pass;
    run.cases.push_back(std::move(k));
  }
  return run;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app("rocehil trend over a long history, against sqlite3 reading the same values");
  int runs = 365, cases = 50, rounds = 3;
  app.add_option("--runs", runs, "Nightly runs in the history")->check(CLI::Range(4, 100000));
  app.add_option("--cases", cases, "Cases in the suite")->check(CLI::Range(1, 10000));
  app.add_option("--rounds", rounds, "Timed rounds; the median is printed")
      ->check(CLI::Range(1, 100));
  CLI11_PARSE(app, argc, argv);
  const auto dir =
      std::filesystem::temp_directory_path() / fmt::format("rocehil-bench-trend-{}", getpid());
  std::filesystem::create_directories(dir);
  const std::string db = (dir / "history.db").string();
  std::mt19937_64 random(1);
  {
    auto h = reports::History::open(db);
    for (int n = 0; n < runs; ++n) h.record(night(n, cases, random));
  }
  const auto h = reports::History::open(db);
  std::vector<double> ours, reference;
  std::size_t found = 0;
  for (int r = 0; r < rounds; ++r) {
    auto t0 = Clock::now();
    reports::TrendOptions o;
    o.suite = "bench";
    o.last = runs;
    const auto t = reports::trend(h, o);
    ours.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
    found = 0;
    for (const auto& s : t.series) found += s.changes.size();
    t0 = Clock::now();
    const std::string query = fmt::format(
        "sqlite3 '{}' \"SELECT s.run_id, s.case_id, s.value FROM samples s JOIN runs r USING "
        "(run_id) WHERE r.suite = 'bench' AND s.metric = 'busbw_gbps' ORDER BY r.started_at, "
        "s.case_id, s.repeat\" > /dev/null",
        db);
    if (std::system(query.c_str()) != 0) {
      fmt::print(stderr, "sqlite3 failed (apt-get install sqlite3)\n");
      return 2;
    }
    reference.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
  }
  std::sort(ours.begin(), ours.end());
  std::sort(reference.begin(), reference.end());
  const double a = ours[ours.size() / 2], b = reference[reference.size() / 2];
  fmt::print(
      "{} runs x {} cases: trend {:.3f} s ({} change points; planted: {}), sqlite3 reading the "
      "same values {:.3f} s, ratio {:.2f}x\n",
      runs, cases, a, found, cases / 5 + cases / 10, b, a / b);
  std::filesystem::remove_all(dir);
  return 0;
}
