// `rocehil history`: what `rocehil run` recorded, a row per run.
#include "history_command.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <map>
#include <memory>
#include <nlohmann/json.hpp>

#include "history_file.hpp"
#include "rocehil/common/edit_distance.hpp"
#include "rocehil/common/units.hpp"
#include "text_table.hpp"

namespace rocehil::cli {

namespace {

struct HistoryOptions {
  std::string db = default_history;
  std::string suite;
  int last = 20;
  bool json = false;
};

nlohmann::ordered_json optional_json(const std::optional<double>& v) {
  return v ? nlohmann::ordered_json(*v) : nlohmann::ordered_json(nullptr);
}

std::string optional_text(const std::optional<double>& v) {
  return v ? format_number(*v) : "-";
}

// The suites the history holds runs of, with how many: what to say when --suite matches none.
std::map<std::string, std::size_t> recorded_suites(const reports::History& history) {
  std::map<std::string, std::size_t> suites;
  for (const auto& r : history.runs(std::nullopt, 1'000'000)) ++suites[r.suite];
  return suites;
}

// "no run of suite 'smok' in H; it holds runs of smoke (12), nightly (3): did you mean 'smoke'?"
std::string no_such_suite(const HistoryOptions& o,
                          const std::map<std::string, std::size_t>& suites) {
  if (suites.empty()) return fmt::format("{} holds no run yet (rocehil run records each)", o.db);
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
  const auto history = open_existing_history(o.db);
  const auto rows =
      history.runs(o.suite.empty() ? std::nullopt : std::optional<std::string>(o.suite), o.last);
  if (rows.empty() && !o.suite.empty() && !o.json) {
    fmt::print("{}\n", no_such_suite(o, recorded_suites(history)));
    return 0;
  }
  if (o.json) {
    nlohmann::ordered_json runs = nlohmann::ordered_json::array();
    for (const auto& r : rows)
      runs.push_back({{"run_id", r.run_id},
                      {"started_at", r.started_at},
                      {"suite", r.suite},
                      {"exit_code", r.exit_code ? nlohmann::ordered_json(*r.exit_code)
                                                : nlohmann::ordered_json(nullptr)},
                      {"interrupted", r.interrupted},
                      {"cases", r.cases},
                      {"passed", r.passed},
                      {"failed", r.failed},
                      {"errors", r.errors},
                      {"not_run", r.not_run},
                      {"skipped", r.skipped},
                      {"headline",
                       {{"busbw_gbps_lowest", optional_json(r.headline.busbw_gbps)},
                        {"lat_p99_us_highest", optional_json(r.headline.lat_p99_us)},
                        {"cnps", optional_json(r.headline.cnps)},
                        {"pfc_storms", optional_json(r.headline.pfc_storms)}}}});
    fmt::print(
        "{}\n",
        nlohmann::ordered_json{{"schema_version", 1}, {"history", o.db}, {"runs", runs}}.dump(2));
    return 0;
  }
  TextTable t({{"run", TextTable::Align::left},
               {"started", TextTable::Align::left},
               {"suite", TextTable::Align::left},
               {"exit"},
               {"cases"},
               {"passed"},
               {"failed"},
               {"errors"},
               {"not run"},
               {"skipped"},
               {"busbw Gb/s"},
               {"p99 us"},
               {"CNPs"},
               {"PFC storms"}});
  for (const auto& r : rows)
    t.add_row({r.run_id, r.started_at, r.suite, r.exit_code ? std::to_string(*r.exit_code) : "-",
               std::to_string(r.cases), std::to_string(r.passed), std::to_string(r.failed),
               std::to_string(r.errors),
               std::to_string(r.not_run) + (r.interrupted ? " (interrupted)" : ""),
               std::to_string(r.skipped), optional_text(r.headline.busbw_gbps),
               optional_text(r.headline.lat_p99_us), optional_text(r.headline.cnps),
               optional_text(r.headline.pfc_storms)});
  fmt::print("{}{} run(s) in {}\n", t.render(), rows.size(), o.db);
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
  cmd->add_flag("--json", o->json, "Print JSON (schema_version 1)");
  cmd->footer(R"(
Examples:
  rocehil history                              (reports/history.db, the 20 newest runs)
  rocehil history --suite nightly --last 7 --json
Passed counts pass, warn and expected failures; failed counts failures and tests expected to
fail that passed. The headline numbers are over the cases that measured them, each case by the
median of its repeats: the lowest busbw (Gbit/s), the highest p99 latency (us), and the sums of
the CNPs the QPs handled and of the PFC storms the mirrors saw ('-': nothing measured it).
Compare two runs with 'rocehil compare RUN_A RUN_B'.
Exit status: 0, or 2 when there is no history at --db.)");
  cmd->callback([o, &exit_code] { exit_code = show(*o); });
}

}  // namespace rocehil::cli
