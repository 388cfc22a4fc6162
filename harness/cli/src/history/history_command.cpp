// `rocehil history`: what `rocehil run` recorded, a row per run.
#include "history/history_command.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <map>
#include <memory>

#include "history/history_file.hpp"
#include "history/history_text.hpp"
#include "rocehil/common/edit_distance.hpp"

namespace rocehil::cli {

namespace {

struct HistoryOptions {
  std::string db = default_history;
  std::string suite;
  int last = 20;
  std::string kind = "all";
  bool json = false;
};

// The suites the history holds runs of (of any kind), with how many: what to say when --suite
// matches none.
std::map<std::string, std::size_t> recorded_suites(const reports::History& history) {
  std::map<std::string, std::size_t> suites;
  for (const auto& r : history.runs(std::nullopt, 1'000'000, /*headlines=*/false))
    ++suites[r.suite];
  return suites;
}

// "no run of suite 'smok' in H; it holds runs of smoke (12), nightly (3): did you mean 'smoke'?"
std::string no_such_suite(const HistoryOptions& o,
                          const std::map<std::string, std::size_t>& suites) {
  if (suites.empty()) return fmt::format("{} holds no run yet (rocehil run records each)", o.db);
  if (const auto it = suites.find(o.suite); it != suites.end())
    return fmt::format(
        "no run of suite '{}' of kind {} in {}; it holds {} of other kinds "
        "(--kind all lists them)",
        o.suite, o.kind, o.db, it->second);
  std::vector<std::string> listed;
  std::string nearest;
  std::size_t best = 4;  // farther than 3 edits is no suggestion
  for (const auto& [name, runs] : suites) {
    listed.push_back(fmt::format("{} ({})", name, runs));
    if (const std::size_t d = edit_distance(o.suite, name); d < best) {
      best = d;
      nearest = name;
    }
  }
  return fmt::format("no run of suite '{}' in {}; it holds runs of {}{}", o.suite, o.db,
                     fmt::join(listed, ", "),
                     nearest.empty() ? "" : fmt::format(": did you mean '{}'?", nearest));
}

int show(const HistoryOptions& o) {
  const reports::RunKinds kinds = reports::parse_run_kinds(o.kind);
  const auto history = open_existing_history(o.db);
  const auto rows =
      history.runs(o.suite.empty() ? std::nullopt : std::optional<std::string>(o.suite), o.last,
                   /*headlines=*/true, kinds);
  if (rows.empty() && !o.suite.empty() && !o.json) {
    fmt::print("{}\n", no_such_suite(o, recorded_suites(history)));
    return 0;
  }
  if (o.json)
    fmt::print("{}\n", history_json(rows, o.db).dump(2));
  else
    fmt::print("{}", render_history(rows, o.db));
  return 0;
}

}  // namespace

void add_history_command(CLI::App& app, int& exit_code) {
  auto o = std::make_shared<HistoryOptions>();
  CLI::App* cmd = app.add_subcommand(
      "history",
      "List the runs `rocehil run` recorded: when, which suite, how each ended, and its headline "
      "numbers.");
  cmd->add_option("--db", o->db, "The run history (rocehil run's --history)")
      ->capture_default_str();
  cmd->add_option("--suite", o->suite, "Only this suite's runs");
  cmd->add_option("--last", o->last, "At most this many runs, newest first")
      ->check(CLI::Range(1, 1000000))
      ->capture_default_str();
  cmd->add_option("--kind", o->kind,
                  "Only runs of these kinds, separated by commas: full, only (--only), set "
                  "(--set), bisect (a bisection's step), selftest, calibrate, unknown; or all")
      ->type_name("KIND[,KIND]|all")
      ->capture_default_str();
  cmd->add_flag("--json", o->json, "Print JSON (schema_version 1)");
  cmd->footer(R"(
Examples:
  rocehil history                              (reports/history.db, the 20 newest runs)
  rocehil history --suite nightly --last 7 --json
  rocehil history --suite nightly --kind full  (the runs last-qualified and trend choose from)
Each run's kind says what it measured: full (every case of the suite, its own settings), only
GLOB (rocehil run --only), set KEY=VALUE (rocehil run --set), bisect (a step of rocehil bisect,
with its candidate), selftest, calibrate. A run that is several (--only with --set, a bisect
step with --only) shows the first of bisect, selftest, calibrate, only, set; --json has its
--only and --set in full. Only full runs are '--baseline last-qualified' baselines and trend
points. A run recorded before kinds were is unknown (read as full) when its command line does
not say.
Passed counts pass, warn and expected failures; failed counts failures and tests expected to
fail that passed. The headline numbers are over the cases that measured them, each case by the
median of its repeats: the lowest busbw (Gbit/s), the highest p99 latency (us), and the sums of
the CNPs the QPs handled and of the PFC storms the mirrors saw ('-': nothing measured it).
Compare two runs with 'rocehil compare RUN_A RUN_B'.
Exit status: 0, or 2 when there is no history at --db or --kind names no kind.)");
  cmd->callback([o, &exit_code] { exit_code = show(*o); });
}

}  // namespace rocehil::cli
