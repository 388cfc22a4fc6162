#include "runs/run_text.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>

#include "rocehil/common/units.hpp"
#include "rocehil/reports/repeats.hpp"

#include "shared/text_table.hpp"

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

// The thresholds that did not pass, one "verdict text: what its worst repeat measured" each.
std::vector<std::string> not_passed(const reports::RepeatsSummary& s) {
  std::vector<std::string> out;
  for (const auto& t : s.thresholds)
    if (t.worst.evaluation.verdict != suites::Verdict::pass)
      out.push_back(fmt::format("{} {}", suites::to_string(t.worst.evaluation.verdict),
                                reports::threshold_text(t, s.repeats)));
  return out;
}

// The switches that gave no counters in a repeat (raw.switches, as switch_metrics writes it),
// "l1: timeout" each, once: said on the terminal, not only inside report.html.
std::vector<std::string> silent_switches(const reports::CaseRecord& c) {
  std::vector<std::string> out;
  for (const reports::Attempt* a : reports::final_attempts(c)) {
    const auto s = a->raw.find("switches");
    if (s == a->raw.end() || !s->is_array()) continue;
    for (const auto& sw : *s)
      if (sw.is_object() && sw.value("answered", true) == false) {
        std::string line = fmt::format("{}: {}", sw.value("switch", std::string("?")),
                                       sw.value("error", std::string("no answer")));
        if (std::find(out.begin(), out.end(), line) == out.end()) out.push_back(std::move(line));
      }
  }
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

// The repeat that measured nothing: "h3: traffic: ...", "repeat 2 of 5: h3: traffic: ...".
std::string error_text(const reports::RepeatsSummary& s) {
  const reports::AttemptError& e = *s.error;
  std::string text = e.host.empty() ? fmt::format("{}: {}", e.phase, e.message)
                                    : fmt::format("{}: {}: {}", e.host, e.phase, e.message);
  return s.repeats > 1 ? fmt::format("repeat {} of {}: {}", s.error_repeat + 1, s.repeats, text)
                       : text;
}

}  // namespace

std::string case_line(const reports::CaseRecord& c) {
  const reports::RepeatsSummary s = reports::summarize_repeats(c);
  double seconds = 0;
  for (const auto& x : c.attempts) seconds += x.seconds;
  std::string line = fmt::format("  {:<30} {:<20} {:<22} {:.1f} s", c.id, outcome_text(c.outcome),
                                 reports::headline_text(s), seconds);
  // The headline names its repeats; without one they are said here, with any retries.
  if (!s.headline && s.repeats > 1) line += fmt::format(" ({} repeats)", s.repeats);
  if (s.retries > 0) line += fmt::format(" ({} after a failure)", reports::retries_text(s.retries));
  line += '\n';
  if (!c.skip_reason.empty()) line += "      " + c.skip_reason + "\n";
  if (s.error) line += "      " + error_text(s) + "\n";
  for (const auto& why : reports::starved_reasons(c))
    line += "      CPU-starved (its timing numbers may be the scheduler's): " + why + "\n";
  if (c.outcome != suites::Outcome::pass)
    for (const auto& t : not_passed(s)) line += "      " + t + "\n";
  for (const auto& sw : silent_switches(c))
    line += "      switch " + sw + " (no counters: its switch_* metrics are absent)\n";
  return line;
}

std::string verdict_table(const reports::RunRecord& run, const std::string& run_dir) {
  TextTable table({{"case", TextTable::Align::left},
                   {"outcome", TextTable::Align::left},
                   {"result", TextTable::Align::left},
                   {"why", TextTable::Align::left}});
  for (const auto& c : run.cases) {
    const reports::RepeatsSummary s = reports::summarize_repeats(c);
    std::string why;
    if (!c.skip_reason.empty()) {
      why = c.skip_reason;
    } else if (s.error) {
      why = error_text(s);
    } else if (!s.thresholds.empty()) {
      const auto failed = not_passed(s);
      why = failed.empty() ? fmt::format("{} threshold(s) passed", s.thresholds.size())
                           : failed.front();
      if (failed.size() > 1) why += fmt::format(" (+{} more)", failed.size() - 1);
    }
    if (const auto starved = reports::starved_reasons(c); !starved.empty())
      why = "CPU-starved: " + starved.front() + (why.empty() ? "" : "; " + why);
    if (why.size() > 120) why = why.substr(0, 117) + "...";
    table.add_row({c.id, outcome_text(c.outcome), reports::headline_text(s), why});
  }
  std::string text = table.render();
  std::map<std::string, std::size_t> silent;  // switch -> cases it gave no counters in
  for (const auto& c : run.cases)
    for (const auto& sw : silent_switches(c)) ++silent[sw.substr(0, sw.find(':'))];
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
