#include "runs/run_printer.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstdio>

#include "fabric/preflight_text.hpp"
#include "fabric/settings_text.hpp"
#include "rocehil/common/units.hpp"
#include "rocehil/reports/run_json.hpp"
#include "runs/run_text.hpp"

namespace rocehil::cli {

void RunPrinter::say(const std::string& text) const {
  if (!speaks()) return;
  fmt::print("{}", text);
  std::fflush(stdout);
}

void RunPrinter::baseline_chosen(const std::string& run_id, const std::string& asked,
                                 const std::string& origin) {
  say(asked == run_id ? fmt::format("baseline: run {} ({})\n", run_id, origin)
                      : fmt::format("baseline: run {} ({} from {})\n", run_id, asked, origin));
}

void RunPrinter::baseline_lacks_cases(const std::string& run_id, const reports::RunKindInfo& kind,
                                      const std::vector<std::string>& cases) {
  say(fmt::format(
      "note: baseline run {} ({}) has no case {}: {} threshold(s) naming baseline.<metric> "
      "will be ERROR (name a full run, or --baseline last-qualified)\n",
      run_id, reports::describe(kind), fmt::join(cases, ", "),
      cases.size() == 1 ? "its" : "their"));
}

void RunPrinter::run_started(const Start& s) {
  inventory_file_ = s.inventory_file;
  // Where the report goes is said at the end, once there is one: a run stopped before its first
  // case (a preflight, a setting) has no report to point at.
  say(fmt::format("rocehil run: suite {} ({}), {} on {} ({})\n", s.suite_name, s.suite_file,
                  count_of(s.cases, "case"), s.inventory_name, count_of(s.hosts, "host")));
}

void RunPrinter::preflight_progress(std::size_t done, std::size_t total) {
  if (!preflight_bar_) {
    preflight_bar_.emplace("check", "hosts", total);
    preflight_bar_->set_enabled(speaks() && bars_);
  }
  preflight_bar_->update(done);
}

void RunPrinter::preflight_ended(const preflight::CheckReport& report, std::size_t failed) {
  if (preflight_bar_) preflight_bar_->finish();
  preflight_bar_.reset();
  if (failed == 0) {
    say(fmt::format("preflight: {} host(s) answered and match the inventory\n",
                    report.hosts.size()));
    return;
  }
  std::string why;
  for (const auto& h : report.hosts)
    if (h.verdict == preflight::HostVerdict::unreachable)
      why += fmt::format("  {}: unreachable: {}\n", h.host, h.unreachable);
    else if (h.verdict == preflight::HostVerdict::failed)
      why += fmt::format("  {}: a check failed (see the table above)\n", h.host);
  if (speaks()) fmt::print("{}", render_check_text(report));
  fmt::print(stderr,
             "rocehil run: preflight failed for {} of {} host(s); nothing was run:\n{}"
             "Fix them (rocehil inventory check {}), or leave them out of the suite's hosts.\n",
             failed, report.hosts.size(), why, inventory_file_);
}

void RunPrinter::agents_joining(std::size_t joined, std::size_t total) {
  if (!agents_bar_) {
    agents_bar_.emplace("agents", "joined", total);
    agents_bar_->set_enabled(speaks() && bars_);
  }
  agents_bar_->update(joined);
}

void RunPrinter::agents_joined(std::size_t joined, double seconds,
                               const std::vector<run::MissingAgent>& missing) {
  if (agents_bar_) agents_bar_->finish();
  agents_bar_.reset();
  if (missing.empty()) {
    say(fmt::format("agents: {} dialed in within {:.1f} s\n", count_of(joined, "host"), seconds));
    return;
  }
  std::string why;
  for (const auto& m : missing) why += fmt::format("  {}: {}\n", m.host, m.why);
  fmt::print(stderr,
             "rocehil run: {} of {} host(s) did not dial in within {:.1f} s; nothing was run:\n{}"
             "Fix them (rocehil inventory check {}), or leave them out of the suite's hosts.\n",
             missing.size(), joined + missing.size(), seconds, why, inventory_file_);
}

// On stderr in every mode: connections the run refused and agents it lost are what the run's
// log must show whatever it prints on stdout.
void RunPrinter::agent_refused(const std::string& peer, const std::string& why) {
  fmt::print(stderr, "rocehil run: refused a connection from {}: {}\n", peer, why);
}

void RunPrinter::agent_lost(const std::string& host, const std::string& why) {
  fmt::print(stderr, "rocehil run: lost the agent on {}: {}\n", host, why);
}

void RunPrinter::test_started(const std::string& test, std::size_t cases) {
  test_bar_.emplace(test, "cases", cases);
  test_bar_->set_enabled(speaks() && bars_);
  case_index_ = 0;
}

// The bar moves (rate, ETA) while a case runs; it is cleared for each case's line.
void RunPrinter::case_progress(double /*fraction*/) {
  if (test_bar_) test_bar_->update(case_index_);
}

void RunPrinter::case_retried(const reports::CaseRecord& c) {
  if (test_bar_) test_bar_->finish();
  say(fmt::format("  {} failed; running it again (a threshold allows a retry)\n", c.id));
}

void RunPrinter::case_ended(const reports::CaseRecord& c, std::size_t index) {
  if (test_bar_) test_bar_->finish();
  say(case_line(c));
  case_index_ = index + 1;
  if (test_bar_) test_bar_->update(case_index_);
}

void RunPrinter::test_ended() {
  if (test_bar_) test_bar_->finish();
  test_bar_.reset();
}

void RunPrinter::history_not_updated(const std::string& why) {
  fmt::print(stderr, "rocehil run: the run history was not updated: {}\n", why);
}

// Settings changed on the fabric are said on stderr whatever the mode, like drained nodes: they
// are what the run did to the cluster.
void RunPrinter::settings_left_restored(const run::SettingsRestored& restored) {
  fmt::print(stderr, "rocehil run: {}\n", left_restored_line(restored));
}

void RunPrinter::settings_in_use(const run::JournalInUse& in_use) {
  fmt::print(stderr, "rocehil run: {}\n", in_use_line(in_use));
}

void RunPrinter::settings_applied(const std::vector<run::SettingInForce>& in_force) {
  fmt::print(stderr, "rocehil run: {}\n", in_force_line(in_force));
}

void RunPrinter::settings_failed(const std::string& why) {
  fmt::print(stderr, "rocehil run: settings: {}\n", why);
}

void RunPrinter::settings_restored(const std::vector<run::SettingsRestored>& restored) {
  fmt::print(stderr, "rocehil run: {}\n", restored_line(restored));
}

void RunPrinter::settings_not_restored(const std::string& why) {
  fmt::print(stderr,
             "rocehil run: settings NOT put back: {} (the journal on the host keeps them: "
             "rocehil settings restore -i INVENTORY)\n",
             why);
}

void RunPrinter::settings_changed_under_run(const std::vector<run::SettingDrift>& drift) {
  fmt::print(stderr,
             "rocehil run: settings changed under the run: {}; what ran meanwhile is graded "
             "ERROR (run.json: settings.changed_under_run)\n",
             run::drift_text(drift));
}

// On stderr: the verdicts are on stdout (text or JSON), and what the run did to the cluster is
// said whatever the mode.
void RunPrinter::nodes_drained(const std::vector<run::DrainResult>& drained,
                               const std::vector<std::string>& not_drained) {
  for (const auto& d : drained)
    if (d.drained)
      fmt::print(stderr, "rocehil run: drained {} (Reason={})\n", d.target.node, d.target.reason);
    else
      fmt::print(stderr, "rocehil run: could not drain {}: {}\n", d.target.node, d.detail);
  for (const auto& n : not_drained) fmt::print(stderr, "rocehil run: not drained: {}\n", n);
  if (drained.empty() && not_drained.empty())
    fmt::print(stderr, "rocehil run: no failure to drain a node for\n");
}

void RunPrinter::run_ended(const reports::RunRecord& record, const std::string& directory) {
  const bool ran = std::any_of(record.cases.begin(), record.cases.end(), [](const auto& c) {
    return c.outcome != suites::Outcome::not_run && c.outcome != suites::Outcome::skipped;
  });
  if (mode_ == Stdout::json)
    fmt::print("{}\n", reports::to_json(record).dump(2));
  else if (mode_ == Stdout::text && !ran)
    fmt::print("{}: nothing was run ({}); {}/run.json records why\n", record.suite_name,
               reports::summary_line(reports::count_outcomes(record)), directory);
  else if (mode_ == Stdout::text)
    fmt::print("\n{}", verdict_table(record, directory));
  std::fflush(stdout);
}

}  // namespace rocehil::cli
