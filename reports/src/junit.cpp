#include "rocehil/reports/junit.hpp"

#include <fmt/format.h>

#include "rocehil/reports/repeats.hpp"

namespace rocehil::reports {

namespace {

// Every threshold, as its worst repeat graded it: "fail: busbw_gbps >= 0.5: ...".
std::string threshold_lines(const RepeatsSummary& s) {
  std::string lines;
  for (const auto& t : s.thresholds)
    lines += fmt::format("{}: {}\n", suites::to_string(t.worst.evaluation.verdict),
                         threshold_text(t, s.repeats));
  return lines;
}

// The thresholds that came to `verdict`, joined, each with what its worst repeat measured: what
// a CI page shows first.
std::string thresholds_with(const RepeatsSummary& s, suites::Verdict verdict) {
  std::string text;
  for (const auto& t : s.thresholds)
    if (t.worst.evaluation.verdict == verdict) {
      if (!text.empty()) text += "; ";
      text += threshold_text(t, s.repeats);
    }
  return text;
}

// "h3: traffic: ...", "repeat 2 of 5: h3: traffic: ...".
std::string error_message(const RepeatsSummary& s) {
  const AttemptError& e = *s.error;
  std::string message = e.host.empty() ? fmt::format("{}: {}", e.phase, e.message)
                                       : fmt::format("{}: {}: {}", e.host, e.phase, e.message);
  if (s.repeats > 1)
    message = fmt::format("repeat {} of {}: {}", s.error_repeat + 1, s.repeats, message);
  return message;
}

std::string testcase_xml(const RunRecord& run, const CaseRecord& c) {
  double seconds = 0;
  for (const auto& a : c.attempts) seconds += a.seconds;
  const RepeatsSummary s = summarize_repeats(c);
  std::string body;
  const std::string grade_text = threshold_lines(s);
  const auto element = [&](std::string_view tag, std::string_view type, std::string_view message,
                           std::string_view text) {
    body += fmt::format("      <{} type=\"{}\" message=\"{}\">{}</{}>\n", tag, type,
                        xml_escape(message), xml_escape(text), tag);
  };
  switch (c.outcome) {
    case suites::Outcome::fail:
      // The fabric failed a repeat's traffic: a failure of the fabric, as a threshold's is.
      if (s.error && s.error->fault == Fault::fabric)
        element("failure", "fabric", error_message(s), grade_text);
      else
        element("failure", "threshold", thresholds_with(s, suites::Verdict::fail), grade_text);
      break;
    case suites::Outcome::unexpected_pass:
      element("failure", "expected_fail",
              "expected to fail (the test injects a fault) but every threshold passed: the "
              "fault went unseen",
              grade_text);
      break;
    case suites::Outcome::error:
      if (s.error) {
        element("error", s.error->phase, error_message(s), "");
      } else {
        const std::string why = thresholds_with(s, suites::Verdict::error);
        element("error", "measurement", why.empty() ? "not graded" : why, grade_text);
      }
      break;
    case suites::Outcome::not_run:
      body +=
          fmt::format("      <skipped message=\"{}\"/>\n",
                      xml_escape(run.interrupted ? "not run: the run was interrupted" : "not run"));
      break;
    case suites::Outcome::skipped:
      body += fmt::format("      <skipped message=\"{}\"/>\n", xml_escape(c.skip_reason));
      break;
    case suites::Outcome::expected_fail:
    case suites::Outcome::pass:
    case suites::Outcome::warn: break;
  }
  std::string out_text;
  // A starved case is never passed or failed in silence: a property a CI page can filter on,
  // and the reasons first in its output.
  const std::vector<std::string> starved = starved_reasons(c);
  if (!starved.empty()) {
    std::string joined;
    for (const auto& why : starved) joined += (joined.empty() ? "" : "; ") + why;
    body = fmt::format(
               "      <properties>\n        <property name=\"cpu_starved\" value=\"{}\"/>\n"
               "      </properties>\n",
               xml_escape(joined)) +
           body;
    for (const auto& why : starved)
      out_text +=
          "CPU-starved: its timing numbers may be the scheduler's, not the fabric's: " + why + "\n";
  }
  if (c.outcome == suites::Outcome::expected_fail) out_text += "failed as expected\n";
  if (const std::string h = headline_text(s); !h.empty()) out_text += h + "\n";
  // Repeats are asked for (repeats:); a retry only follows a failure (a threshold's retry:).
  if (s.repeats > 1)
    out_text +=
        fmt::format("{} repeats, each graded on its own; the worst decides the case\n", s.repeats);
  if (s.retries > 0) out_text += retries_text(s.retries) + " after a failure\n";
  if (c.outcome != suites::Outcome::fail && c.outcome != suites::Outcome::unexpected_pass)
    out_text += grade_text;
  if (!out_text.empty())
    body += fmt::format("      <system-out>{}</system-out>\n", xml_escape(out_text));
  return fmt::format("    <testcase classname=\"{}\" name=\"{}\" time=\"{:.3f}\"{}",
                     xml_escape(run.suite_name + "." + c.test), xml_escape(c.id), seconds,
                     body.empty() ? "/>\n" : ">\n" + body + "    </testcase>\n");
}

}  // namespace

std::string xml_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    switch (ch) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default:
        if ((c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7f)
          out += '?';
        else
          out += ch;
    }
  }
  return out;
}

std::string junit_xml(const RunRecord& run) {
  int failures = 0, errors = 0, skipped = 0;
  double seconds = 0;
  std::string cases;
  for (const auto& c : run.cases) {
    if (suites::is_failure(c.outcome)) ++failures;
    if (c.outcome == suites::Outcome::error) ++errors;
    if (c.outcome == suites::Outcome::not_run || c.outcome == suites::Outcome::skipped) ++skipped;
    for (const auto& a : c.attempts) seconds += a.seconds;
    cases += testcase_xml(run, c);
  }
  const std::string counts =
      fmt::format("tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"{}\" time=\"{:.3f}\"",
                  run.cases.size(), failures, errors, skipped, seconds);
  std::string xml = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  xml += fmt::format("<testsuites name=\"rocehil\" {}>\n", counts);
  xml += fmt::format("  <testsuite name=\"{}\" {} timestamp=\"{}\">\n", xml_escape(run.suite_name),
                     counts, xml_escape(run.started_at));
  xml += cases;
  xml += "  </testsuite>\n</testsuites>\n";
  return xml;
}

}  // namespace rocehil::reports
