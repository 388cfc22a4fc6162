// trend.html (see trend_html.hpp).
#include "rocehil/reports/trend_html.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "html_page.hpp"
#include "rocehil/common/units.hpp"
#include "rocehil/reports/junit.hpp"
#include "rocehil/reports/svg_chart.hpp"

namespace rocehil::reports {

namespace {

std::string report_of(std::string_view prefix, const std::string& run_id) {
  return fmt::format("{}{}/report.html", prefix, run_id);
}

std::string anchor(const TrendSeries& s) {
  std::string id = "s-" + s.case_id + "-" + s.metric;
  for (char& c : id)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_')) c = '_';
  return id;
}

std::string size_text(const TrendChange& c) {
  return c.change_pct ? fmt::format("{:+.1f}%", *c.change_pct) : std::string("from 0");
}

// A run's place on the time axis: its start date, with the time of day when two runs of the
// trend started on one day (bisect steps, reruns).
std::vector<std::string> run_dates(const Trend& t) {
  std::vector<std::string> days, out;
  for (const auto& r : t.runs) days.push_back(r.started_at.substr(0, 10));
  std::vector<std::string> sorted = days;
  std::sort(sorted.begin(), sorted.end());
  const bool one_a_day = std::adjacent_find(sorted.begin(), sorted.end()) == sorted.end();
  for (const auto& r : t.runs)
    out.push_back(one_a_day || r.started_at.size() < 16
                      ? r.started_at.substr(0, 10)
                      : r.started_at.substr(5, 5) + " " + r.started_at.substr(11, 5));
  return out;
}

std::string chart(const Trend& t, const TrendSeries& s, std::string_view prefix) {
  LineChart chart;
  chart.title = fmt::format("{} {} over {} runs", s.case_id, s.metric, t.runs.size());
  chart.x_title = "run started (UTC)";
  chart.x_positions = run_dates(t);
  chart.y_title = s.metric;
  chart.width = 900;
  chart.height = 280;
  LineSeries line;
  line.name = s.metric;
  for (std::size_t r = 0; r < s.values.size(); ++r) {
    // A run that did not measure it breaks the line: a gap, not a 0.
    line.points.push_back({static_cast<double>(r + 1),
                           s.values[r] ? *s.values[r] : std::numeric_limits<double>::quiet_NaN()});
    line.links.push_back(report_of(prefix, t.runs[r].run_id));
  }
  chart.series.push_back(std::move(line));
  for (const auto& c : s.changes)
    chart.markers.push_back({static_cast<double>(c.run) + 0.5, size_text(c)});
  return line_chart(chart);
}

std::string changes_list(const Trend& t, const TrendSeries& s, std::string_view prefix) {
  if (s.changes.empty()) return "<p>No change point.</p>\n";
  std::string out = "<ul>\n";
  for (const auto& c : s.changes) {
    out += fmt::format(
        "<li><span class=\"{}\">{} {} &rarr; {} ({})</span> at run {} <a href=\"{}\">{}</a>, "
        "p {:.3g}",
        c.worse ? "fail" : "", c.worse ? "worse:" : "", esc(format_number(c.median_before)),
        esc(format_number(c.median_after)), esc(size_text(c)), c.run + 1,
        esc(report_of(prefix, t.runs[c.run].run_id)), esc(t.runs[c.run].run_id), c.p);
    if (c.first_found) out += ", <strong>first found with the newest run</strong>";
    if (c.changed.empty()) {
      out += fmt::format("<br>nothing recorded changed since run {} ({})", c.before + 1,
                         esc(t.runs[c.before].run_id));
    } else {
      out += fmt::format(
          "<br>what changed since run {} ({}):\n<table><tr><th>setting</th>"
          "<th>before</th><th>after</th></tr>\n",
          c.before + 1, esc(t.runs[c.before].run_id));
      for (const auto& x : c.changed)
        out += fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td></tr>\n", esc(x.name),
                           esc(x.before.value_or("(absent)")), esc(x.after.value_or("(absent)")));
      out += "</table>";
    }
    out += "</li>\n";
  }
  return out + "</ul>\n";
}

std::string summary(const Trend& t) {
  std::string out =
      "<h2>Series</h2>\n<table><tr><th>case</th><th>metric</th><th>runs measured</th>"
      "<th>first</th><th>last</th><th>change points</th></tr>\n";
  for (const auto& s : t.series) {
    const SeriesSpan span = span_of(s);
    out += fmt::format(
        "<tr><td><a href=\"#{}\">{}</a></td><td>{}</td><td class=\"num\">{}/{}</td>"
        "<td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}{}</td></tr>\n",
        anchor(s), esc(s.case_id), esc(s.metric), span.measured, t.runs.size(),
        esc(span.first ? format_number(*span.first) : "-"),
        esc(span.last ? format_number(*span.last) : "-"), s.changes.size(),
        span.worse > 0 ? fmt::format(" <span class=\"fail\">({} worse)</span>", span.worse) : "");
  }
  return out + "</table>\n";
}

std::string runs_table(const Trend& t, std::string_view prefix) {
  std::string out =
      "<h2>Runs</h2>\n<table><tr><th>#</th><th>run</th><th>started</th><th>exit</th></tr>\n";
  for (std::size_t r = 0; r < t.runs.size(); ++r)
    out += fmt::format(
        "<tr><td class=\"num\">{}</td><td><a href=\"{}\">{}</a></td><td>{}</td>"
        "<td class=\"num\">{}</td></tr>\n",
        r + 1, esc(report_of(prefix, t.runs[r].run_id)), esc(t.runs[r].run_id),
        esc(t.runs[r].started_at),
        t.runs[r].exit_code ? fmt::format("{}", *t.runs[r].exit_code) : "-");
  return out + "</table>\n";
}

}  // namespace

std::string trend_html(const Trend& t, std::string_view report_prefix) {
  const std::string title = fmt::format("rocehil trend: {}", t.suite);
  std::string out = fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      "<title>{}</title>\n<style>{}</style>\n</head>\n<body>\n<h1>{}</h1>\n",
      esc(title), page_style, esc(title));
  std::size_t changes = 0;
  for (const auto& s : t.series) changes += s.changes.size();
  out += fmt::format(
      "<p>{} run(s), {} to {}; {} change point(s). Each run's value is the median of its "
      "repeats; a run that did not measure a metric is a gap. Change points: E-divisive means "
      "(Matteson and James 2014), kept when a permutation test or Student's t-test on the "
      "values' logarithms finds the split significant. Click a point for that run's "
      "report.</p>\n",
      t.runs.size(), esc(t.runs.empty() ? "" : t.runs.front().run_id),
      esc(t.runs.empty() ? "" : t.runs.back().run_id), changes);
  out += summary(t);
  std::string current_case;
  for (const auto& s : t.series) {
    if (s.case_id != current_case) {
      current_case = s.case_id;
      out += fmt::format("<h2>{}</h2>\n", esc(s.case_id));
    }
    out += fmt::format("<section id=\"{}\">\n<h3>{}</h3>\n<figure>{}</figure>\n{}</section>\n",
                       anchor(s), esc(s.metric), chart(t, s, report_prefix),
                       changes_list(t, s, report_prefix));
  }
  out += runs_table(t, report_prefix);
  return out + "</body>\n</html>\n";
}

}  // namespace rocehil::reports
