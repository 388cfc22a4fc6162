#include "run_text.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <map>

#include "rocehil/common/units.hpp"

#include "text_table.hpp"

namespace rocehil::cli {

namespace {

std::string outcome_text(suites::Outcome o) {
  switch (o) {
    case suites::Outcome::pass: return "pass";
    case suites::Outcome::warn: return "warn";
    case suites::Outcome::fail: return "FAIL";
    case suites::Outcome::error: return "ERROR";
    case suites::Outcome::expected_fail: return "failed as expected";
    case suites::Outcome::unexpected_pass: return "FAIL (expected to fail)";
    case suites::Outcome::not_run: return "not run";
    case suites::Outcome::skipped: return "skipped";
  }
  return "?";
}

const reports::Attempt* last_attempt(const reports::CaseRecord& c) {
  return c.attempts.empty() ? nullptr : &c.attempts.back();
}

// The thresholds that did not pass, one "text (detail)" each.
std::vector<std::string> not_passed(const reports::Attempt& a) {
  std::vector<std::string> out;
  if (!a.grade) return out;
  for (const auto& r : a.grade->results)
    if (r.evaluation.verdict != suites::Verdict::pass)
      out.push_back(fmt::format("{} {}: {}", suites::to_string(r.evaluation.verdict), r.threshold,
                                r.evaluation.detail));
  return out;
}

// The switches that gave no counters in the attempt (raw.switches, as switch_metrics writes it),
// "l1: timeout" each: said on the terminal, not only inside report.html.
std::vector<std::string> silent_switches(const reports::Attempt& a) {
  std::vector<std::string> out;
  const auto s = a.raw.find("switches");
  if (s == a.raw.end() || !s->is_array()) return out;
  for (const auto& sw : *s)
    if (sw.is_object() && sw.value("answered", true) == false)
      out.push_back(fmt::format("{}: {}", sw.value("switch", std::string("?")),
                                sw.value("error", std::string("no answer"))));
  return out;
}

// "captures kept: 3 files, 1.2 MiB in DIR/captures" and each capture that was to be kept and is
// not, with why; nothing when the run kept none.
std::string kept_captures_text(const reports::RunRecord& run, const std::string& run_dir) {
  std::size_t files = 0;
  std::uint64_t bytes = 0;
  std::string not_kept;
  for (const auto& c : run.cases)
    for (const auto& a : c.attempts)
      for (const auto& k : a.captures_kept) {
        files += k.files.size();
        bytes += k.bytes;
        if (!k.not_kept.empty())
          not_kept += fmt::format("  {} {}: not kept: {}\n", c.id, k.point, k.not_kept);
      }
  std::string text;
  if (files > 0)
    text = fmt::format("captures kept: {}, {} in {}/captures\n", count_of(files, "file"),
                       format_bytes(static_cast<double>(bytes)), run_dir);
  return text + not_kept;
}

std::string error_text(const reports::AttemptError& e) {
  return e.host.empty() ? fmt::format("{}: {}", e.phase, e.message)
                        : fmt::format("{}: {}: {}", e.host, e.phase, e.message);
}

}  // namespace

std::string headline(const suites::Values& m, std::string_view workload) {
  const bool point_to_point = workload == "bw" || workload == "calibrate_bw";
  if (const auto b = m.find("busbw_gbps"); b != m.end())
    return fmt::format("{} {:.3g} Gbit/s", point_to_point ? "bw" : "busbw", b->second);
  if (const auto l = m.find("lat_p99_us"); l != m.end())
    return fmt::format("lat p99 {:.3g} us", l->second);
  return "";
}

std::string case_line(const reports::CaseRecord& c) {
  const reports::Attempt* a = last_attempt(c);
  double seconds = 0;
  for (const auto& x : c.attempts) seconds += x.seconds;
  std::string line = fmt::format("  {:<30} {:<20} {:<22} {:.1f} s", c.id, outcome_text(c.outcome),
                                 a && !a->error ? headline(a->metrics, c.workload) : "", seconds);
  if (c.attempts.size() > 1) line += fmt::format(" ({} attempts)", c.attempts.size());
  line += '\n';
  if (!c.skip_reason.empty()) line += "      " + c.skip_reason + "\n";
  if (a && a->error) line += "      " + error_text(*a->error) + "\n";
  if (a && c.outcome != suites::Outcome::pass)
    for (const auto& t : not_passed(*a)) line += "      " + t + "\n";
  if (a)
    for (const auto& s : silent_switches(*a))
      line += "      switch " + s + " (no counters: its switch_* metrics are absent)\n";
  return line;
}

std::string verdict_table(const reports::RunRecord& run, const std::string& run_dir) {
  TextTable table({{"case", TextTable::Align::left},
                   {"outcome", TextTable::Align::left},
                   {"result", TextTable::Align::left},
                   {"why", TextTable::Align::left}});
  for (const auto& c : run.cases) {
    const reports::Attempt* a = last_attempt(c);
    std::string why;
    if (!c.skip_reason.empty()) {
      why = c.skip_reason;
    } else if (a && a->error) {
      why = error_text(*a->error);
    } else if (a && a->grade) {
      const auto failed = not_passed(*a);
      why = failed.empty() ? fmt::format("{} threshold(s) passed", a->grade->results.size())
                           : failed.front();
      if (failed.size() > 1) why += fmt::format(" (+{} more)", failed.size() - 1);
    }
    if (why.size() > 100) why = why.substr(0, 97) + "...";
    table.add_row({c.id, outcome_text(c.outcome),
                   a && !a->error ? headline(a->metrics, c.workload) : "", why});
  }
  std::string text = table.render();
  std::map<std::string, std::size_t> silent;  // switch -> cases it gave no counters in
  for (const auto& c : run.cases)
    if (const reports::Attempt* a = last_attempt(c))
      for (const auto& s : silent_switches(*a)) ++silent[s.substr(0, s.find(':'))];
  if (!silent.empty()) {
    std::vector<std::string> names;
    for (const auto& [name, n] : silent)
      names.push_back(fmt::format("{} ({})", name, count_of(n, "case")));
    text += fmt::format("\nswitches that gave no counters: {}\n", fmt::join(names, ", "));
  }
  text += fmt::format("\n{}: {}\n", run.suite_name,
                      reports::summary_line(reports::count_outcomes(run)));
  if (run.interrupted) text += "interrupted: the cases not run are marked so\n";
  text += kept_captures_text(run, run_dir);
  text += fmt::format("report: {}/report.html ({}/run.json, {}/junit.xml)\n", run_dir, run_dir,
                      run_dir);
  return text;
}

}  // namespace rocehil::cli
