// `rocehil compare RUN_A RUN_B`: what changed from run A (the reference) to run B.
#include <fmt/format.h>

#include <memory>

#include "history/history_command.hpp"
#include "history/history_file.hpp"
#include "rocehil/common/units.hpp"
#include "rocehil/reports/comparison.hpp"
#include "shared/text_table.hpp"

namespace rocehil::cli {

namespace {

struct CompareOptions {
  std::string db = default_history;
  std::string run_a, run_b;
  double alpha = 0.05;
  double min_change = 2;
  bool all = false;
  bool json = false;
};

std::string number(double v) {
  return format_number(v);
}

std::string settings_text(const reports::Comparison& c) {
  if (c.settings.empty()) return "settings: the same in both runs\n";
  TextTable t({{"setting", TextTable::Align::left},
               {"A", TextTable::Align::left},
               {"B", TextTable::Align::left}});
  for (const auto& s : c.settings)
    t.add_row({s.name, s.before.value_or("(absent)"), s.after.value_or("(absent)")});
  return fmt::format("settings that differ ({}):\n{}", c.settings.size(), t.render());
}

std::string outcomes_text(const reports::Comparison& c) {
  if (c.outcomes.empty()) return "outcomes: the same in both runs\n";
  TextTable t({{"case", TextTable::Align::left},
               {"A", TextTable::Align::left},
               {"B", TextTable::Align::left}});
  for (const auto& o : c.outcomes) t.add_row({o.case_id, o.before, o.after});
  return fmt::format("outcomes that changed ({}):\n{}", c.outcomes.size(), t.render());
}

// A metric whose every repeat took one value in both runs (errors 0 and 0) says nothing; it is
// listed only with --all.
bool unchanged_constant(const reports::MetricComparison& m) {
  for (const double v : m.a)
    if (v != m.a.front()) return false;
  for (const double v : m.b)
    if (v != m.a.front()) return false;
  return true;
}

std::string metrics_text(const reports::Comparison& c, bool all) {
  TextTable t({{"case", TextTable::Align::left},
               {"metric", TextTable::Align::left},
               {"A median"},
               {"B median"},
               {"change"},
               {"repeats"},
               {"p"},
               {"", TextTable::Align::left}});
  int significant = 0, undecidable = 0, hidden = 0;
  for (const auto& m : c.metrics) {
    significant += m.significant;
    undecidable += !m.decidable;
    if (!all && unchanged_constant(m)) {
      ++hidden;
      continue;
    }
    t.add_row({m.case_id, m.metric, number(m.median_a), number(m.median_b),
               m.change_pct ? fmt::format("{:+.1f}%", *m.change_pct) : "-",
               fmt::format("{}/{}", m.a.size(), m.b.size()), fmt::format("{:.3g}", m.test.p_value),
               m.significant ? "significant" : (m.decidable ? "" : "too few repeats")});
  }
  std::string out = t.empty() ? "" : t.render();
  out += fmt::format("{} metric(s) compared; {} significant change(s) (p < {}, at least {}%)",
                     c.metrics.size(), significant, c.alpha, c.min_change_pct);
  if (undecidable > 0)
    out += fmt::format(
        "; {} could not be decided: too few repeats to reach p < {} (4 against 4 can; give the "
        "suite's tests `repeats: 5`)",
        undecidable, c.alpha);
  if (hidden > 0) out += fmt::format("; {} unchanged constant(s) not shown (--all)", hidden);
  return out + "\n";
}

int compare(const CompareOptions& o) {
  const auto history = open_existing_history(o.db);
  const auto a = history.snapshot(o.run_a), b = history.snapshot(o.run_b);
  const reports::Comparison c = reports::compare_runs(a, b, o.alpha, o.min_change);
  if (o.json) {
    fmt::print("{}\n", reports::to_json(c).dump(2));
    return 0;
  }
  fmt::print("rocehil compare: B {} against A {} ({})\n", c.run_b, c.run_a, o.db);
  if (a.row.suite != b.row.suite)
    fmt::print(
        "note: the runs are of different suites ({} and {}); only cases both ran are "
        "compared\n",
        a.row.suite, b.row.suite);
  // A bisect step or an --only run is compared as it is, but the reader should know why cases
  // are missing or settings differ.
  for (const auto& [name, run] : {std::pair{"A", &a}, std::pair{"B", &b}})
    if (run->row.kind.kind != reports::RunKind::full &&
        run->row.kind.kind != reports::RunKind::unknown)
      fmt::print("note: {} is {}\n", name, reports::describe(run->row.kind));
  fmt::print("\n{}\n{}\n{}", settings_text(c), outcomes_text(c), metrics_text(c, o.all));
  return 0;
}

}  // namespace

void add_compare_command(CLI::App& app, int& exit_code) {
  auto o = std::make_shared<CompareOptions>();
  CLI::App* cmd = app.add_subcommand(
      "compare",
      "Compare two recorded runs: settings that differ, outcomes that changed, and each "
      "metric's change with a Mann-Whitney U test over the repeats.");
  cmd->add_option("RUN_A", o->run_a,
                  "The reference run (an id from rocehil history, or its "
                  "unique beginning)")
      ->required();
  cmd->add_option("RUN_B", o->run_b, "The run to compare with it")->required();
  cmd->add_option("--db", o->db, "The run history (rocehil run's --history)")
      ->capture_default_str();
  cmd->add_option("--alpha", o->alpha, "The p-value under which a change is significant")
      ->check(CLI::Range(1e-9, 0.5))
      ->capture_default_str();
  cmd->add_option("--min-change", o->min_change,
                  "The smallest change of the medians, in %, that can be significant")
      ->check(CLI::Range(0.0, 1000.0))
      ->capture_default_str();
  cmd->add_flag("--all", o->all, "Also list metrics that kept one value in every repeat");
  cmd->add_flag("--json", o->json, "Print JSON (schema_version 1) with every repeat's value");
  cmd->footer(R"(
Examples:
  rocehil compare 20261121T010000Z-nightly 20261122T010000Z-nightly
  rocehil compare 20261121T01 20261122T01 --db /srv/rocehil/history.db --json
Settings (firmware, drivers, ECN/DCQCN and PFC per NIC, MTU, kernel, versions, and the suite and
inventory files' hashes) come from each run's preflight snapshot and are listed first: a change
there usually explains the numbers below. Each metric shows the medians of the repeats, the
change from A to B, and the two-sided p-value of a Mann-Whitney U test over the repeats (exact
for small samples without ties). A change is significant when p < --alpha and the medians moved
by at least --min-change %: a rank test is sure of a 0.3 % shift that every repeat shows, and that
is jitter to a fabric engineer. A rank test needs repeats: with 3 against 3 no change can reach
p < 0.05, so give the suite's tests `repeats: 5` for runs you mean to compare.
Exit status: 0, or 2 when the history or a run is not found.)");
  cmd->callback([o, &exit_code] { exit_code = compare(*o); });
}

}  // namespace rocehil::cli
