// `rocehil trend --suite S`: a suite's metrics over its recorded runs, the change points in them
// and what changed on the fabric at each.
#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <memory>

#include "history/history_command.hpp"
#include "history/history_file.hpp"
#include "rocehil/common/units.hpp"
#include "rocehil/reports/trend.hpp"
#include "rocehil/reports/trend_html.hpp"
#include "shared/text_table.hpp"

namespace rocehil::cli {

namespace {

struct TrendCommandOptions {
  std::string db = default_history;
  reports::TrendOptions trend;
  std::string fail_on_change;  // "" or "worse"
  std::string kind = "full";   // --kind: the kinds of run that are points
  std::string html;            // write trend.html here too
  bool json = false;
};

std::string change_text(const reports::Trend& t, const reports::TrendSeries& s,
                        const reports::TrendChange& c) {
  std::string line = fmt::format(
      "  {} {}: {} -> {} ({}) at {}, p {:.3g}{}{}\n", s.case_id, s.metric,
      format_number(c.median_before), format_number(c.median_after),
      c.change_pct ? fmt::format("{:+.1f}%", *c.change_pct) : "from 0", t.runs[c.run].run_id, c.p,
      c.worse ? ", WORSE" : "", c.first_found ? ", first found with the newest run" : "");
  if (c.changed.empty()) {
    line += fmt::format("      nothing recorded changed from {}\n", t.runs[c.before].run_id);
    return line;
  }
  line += fmt::format("      what changed from {}:\n", t.runs[c.before].run_id);
  for (const auto& x : c.changed)
    line += fmt::format("        {}: {} -> {}\n", x.name, x.before.value_or("(absent)"),
                        x.after.value_or("(absent)"));
  return line;
}

// The runs' reports are beside the history (rocehil run writes both in its --reports): the
// page's links lead there from wherever it is written.
void write_page(const reports::Trend& t, const TrendCommandOptions& o) {
  namespace fs = std::filesystem;
  const fs::path page = fs::absolute(o.html);
  const fs::path reports_dir = fs::absolute(o.db).parent_path();
  std::string prefix = reports_dir.lexically_relative(page.parent_path()).generic_string();
  prefix = prefix.empty() || prefix == "." ? "" : prefix + "/";
  std::ofstream out(page);
  out << reports::trend_html(t, prefix);
  out.close();
  if (!out)
    throw Error(
        ExitCode::infrastructure,
        fmt::format("{}: cannot write the trend page (is the folder there and writable?)", o.html));
}

int show_trend(const TrendCommandOptions& o) {
  const auto history = open_existing_history(o.db);
  reports::TrendOptions options = o.trend;
  options.kinds = reports::parse_run_kinds(o.kind);
  const reports::Trend t = reports::trend(history, options);
  const auto alarms = reports::first_found_worse_changes(t);
  if (!o.html.empty()) write_page(t, o);
  const int code = o.fail_on_change == "worse" && !alarms.empty() ? 1 : 0;
  if (o.json) {
    fmt::print("{}\n", reports::to_json(t).dump(2));
    return code;
  }
  fmt::print("rocehil trend: suite {}, {} run(s) from {} to {} ({})\n\n", t.suite, t.runs.size(),
             t.runs.front().run_id, t.runs.back().run_id, o.db);
  TextTable table({{"case", TextTable::Align::left},
                   {"metric", TextTable::Align::left},
                   {"runs"},
                   {"first"},
                   {"last"},
                   {"changes"}});
  std::string changes;
  std::size_t found = 0;
  for (const auto& s : t.series) {
    const reports::SeriesSpan span = reports::span_of(s);
    table.add_row({s.case_id, s.metric, fmt::format("{}/{}", span.measured, t.runs.size()),
                   format_number(span.first.value_or(0)), format_number(span.last.value_or(0)),
                   fmt::format("{}", s.changes.size())});
    for (const auto& c : s.changes) {
      ++found;
      changes += change_text(t, s, c);
    }
  }
  fmt::print("{}", table.render());
  if (found == 0) {
    fmt::print("\nno change points (p <= {})\n", o.trend.detection.max_p);
  } else {
    fmt::print("\nchange points ({}, p <= {}):\n{}", found, o.trend.detection.max_p, changes);
  }
  if (code != 0)
    fmt::print("\n{} change(s) for the worse first found with the newest {} run(s): exit 1\n",
               alarms.size(), t.recent);
  return code;
}

}  // namespace

void add_trend_command(CLI::App& app, int& exit_code) {
  auto o = std::make_shared<TrendCommandOptions>();
  CLI::App* cmd = app.add_subcommand(
      "trend",
      "A suite's metrics over its recorded runs: the change points in each series and what "
      "changed on the fabric at each one.");
  cmd->add_option("--suite", o->trend.suite, "The suite's name (as rocehil history lists it)")
      ->required();
  cmd->add_option("--last", o->trend.last, "The newest runs of the suite to look at")
      ->check(CLI::Range(2, 100000))
      ->capture_default_str();
  cmd->add_option("--case", o->trend.case_glob, "Only the cases whose id matches this glob")
      ->capture_default_str();
  cmd->add_option("--metric", o->trend.metrics,
                  "A metric to follow (repeatable); default: each case's headline, busbw_gbps "
                  "or lat_p99_us");
  cmd->add_option("--kind", o->kind,
                  "The kinds of run that are points, separated by commas (full, only, set, "
                  "bisect, selftest, calibrate) or all; a bisect step or an --only run is not the "
                  "suite's night")
      ->capture_default_str();
  cmd->add_option("--db", o->db, "The run history (rocehil run's --history)")
      ->capture_default_str();
  cmd->add_option("--p", o->trend.detection.max_p,
                  "The p-value at or under which a change point is kept (twice the smaller of "
                  "the permutation test's and Student's t-test's)")
      ->check(CLI::Range(1e-6, 0.5))
      ->capture_default_str();
  o->trend.detection.min_change_pct = 5;
  cmd->add_option("--min-change", o->trend.detection.min_change_pct,
                  "The smallest change of the medians, in %, that is a change point (runs on a "
                  "busy machine or fabric drift by a few percent with nothing changed)")
      ->check(CLI::Range(0.0, 1000.0))
      ->capture_default_str();
  cmd->add_option("--min-runs", o->trend.detection.min_segment,
                  "Runs on each side of a change point, at least")
      ->check(CLI::Range(2, 1000))
      ->capture_default_str();
  cmd->add_option(
         "--fail-on-change", o->fail_on_change,
         "worse: exit 1 when a change for the worse is first found with the newest --recent "
         "runs, on the first night it is significant")
      ->check(CLI::IsMember({"worse"}));
  cmd->add_option("--recent", o->trend.recent,
                  "How many of the newest runs count as new: a change is first found when the "
                  "history without them does not show it (a nightly job that skipped a night "
                  "gives 2)")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  cmd->add_option("--html", o->html,
                  "Also write trend.html here: a chart per series, change points marked, each "
                  "point linked to its run's report");
  cmd->add_flag("--json", o->json,
                "Print JSON (schema_version 1): every run's value of every series");
  cmd->footer(R"(
Examples:
  rocehil trend --suite nightly
  rocehil trend --suite nightly --last 90 --case 'allreduce/*' --metric busbw_gbps --metric time_p99_us
  rocehil trend --suite nightly --fail-on-change worse --db /srv/rocehil/history.db
  rocehil trend --suite nightly --html reports/trend.html   (open it in a browser)
  rocehil trend --suite nightly --kind full,set   (nights that also ran with --set)
Each run's value is the median of its repeats; a run that did not measure a metric leaves a gap
in its series (never a 0). Change points are found by E-divisive means (Matteson and James 2014:
the split that most separates the values before it from those after), as MongoDB and DataStax's
Hunter run it over their nightly performance tests, then searched again on each side. A split
is kept when its medians differ by --min-change or more and p <= --p, p being twice the smaller of two tests' p-values: a permutation test of
the values (999 shuffles; assumes nothing of their distribution, but three runs against three
are only 20 orderings and can never give less than 0.1), and Student's t-test on the values'
logarithms (the step against the runs' spread, so a clear step shows with few runs), taken
times the number of splits the search chose from. For each change: the medians either side,
the change in %, whether it is for the worse (lower bandwidth, higher latency, more errors) and
what the history recorded as different between the last run before it and the first after:
settings, firmware, drivers, kernel, rocehil version, the suite and inventory files.
Detection delay: a change point needs --min-runs runs on each side, the first after it
included. With the defaults a clear step on night N (10% in runs that vary 2%, 50% in runs that
vary 10%) is found on night N + 2 nine times in ten; a noisier one when the tests can tell it
(bench/RESULTS.md); a series with no step raises about one false alarm a thousand nights.
--fail-on-change worse exits 1 on the night a change for the worse is first found: one that the
history without the newest --recent runs did not show, wherever in the history it starts. Each
change fails one nightly job.
For last night against the night before, use rocehil compare.
Exit status: 0; 1 with --fail-on-change worse when such a change is first found with the
newest --recent runs; 2 when the history or the suite is not found.)");
  cmd->callback([o, &exit_code] { exit_code = show_trend(*o); });
}

}  // namespace rocehil::cli
