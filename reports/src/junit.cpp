#include "rocehil/reports/junit.hpp"

#include <fmt/format.h>

namespace rocehil::reports {

namespace {

std::string threshold_lines(const suites::CaseGrade& grade) {
  std::string lines;
  for (const auto& r : grade.results)
    lines += fmt::format("{}: {} ({})\n", suites::to_string(r.evaluation.verdict), r.threshold,
                         r.evaluation.detail);
  return lines;
}

// The thresholds that came to `verdict`, joined: what a CI page shows first. With `detail`, each
// with why (an error says what could not be measured).
std::string thresholds_with(const suites::CaseGrade& grade, suites::Verdict verdict, bool detail) {
  std::string text;
  for (const auto& r : grade.results)
    if (r.evaluation.verdict == verdict) {
      if (!text.empty()) text += "; ";
      text += detail ? fmt::format("{}: {}", r.threshold, r.evaluation.detail) : r.threshold;
    }
  return text;
}

std::string testcase_xml(const RunRecord& run, const CaseRecord& c) {
  double seconds = 0;
  for (const auto& a : c.attempts) seconds += a.seconds;
  std::string body;
  const Attempt* last = c.attempts.empty() ? nullptr : &c.attempts.back();
  const std::string grade_text = last && last->grade ? threshold_lines(*last->grade) : "";
  const auto element = [&](std::string_view tag, std::string_view type, std::string_view message,
                           std::string_view text) {
    body += fmt::format("      <{} type=\"{}\" message=\"{}\">{}</{}>\n", tag, type,
                        xml_escape(message), xml_escape(text), tag);
  };
  switch (c.outcome) {
    case suites::Outcome::fail:
      element("failure", "threshold", thresholds_with(*last->grade, suites::Verdict::fail, false),
              grade_text);
      break;
    case suites::Outcome::unexpected_pass:
      element("failure", "expected_fail",
              "expected to fail (the test injects a fault) but every threshold passed: the "
              "fault went unseen",
              grade_text);
      break;
    case suites::Outcome::error:
      if (last && last->error)
        element("error", last->error->phase,
                last->error->host.empty()
                    ? fmt::format("{}: {}", last->error->phase, last->error->message)
                    : fmt::format("{}: {}: {}", last->error->host, last->error->phase,
                                  last->error->message),
                "");
      else
        element("error", "measurement",
                last && last->grade ? thresholds_with(*last->grade, suites::Verdict::error, true)
                                    : "not graded",
                grade_text);
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
  if (c.outcome == suites::Outcome::expected_fail) out_text += "failed as expected\n";
  if (c.attempts.size() > 1)
    out_text += fmt::format("{} attempts (retried after a failure)\n", c.attempts.size());
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
