#include "rocehil/reports/html_report.hpp"

#include <fmt/format.h>

#include <map>
#include <vector>

#include "html_captures.hpp"
#include "html_charts.hpp"
#include "html_nics.hpp"
#include "html_page.hpp"
#include "html_switches.hpp"
#include "json_view.hpp"
#include "rocehil/common/units.hpp"
#include "rocehil/reports/junit.hpp"
#include "rocehil/reports/repeats.hpp"
#include "rocehil/reports/run_json.hpp"
#include "rocehil/suites/metrics.hpp"

namespace rocehil::reports {

namespace {

// Outcome names as run.json writes them, with the words and colours a reader scans for.
struct OutcomeLook {
  const char* label;
  const char* colour;
};
OutcomeLook look(const std::string& outcome) {
  static const std::map<std::string, OutcomeLook> looks{
      {"pass", {"pass", "#1a7f37"}},
      {"warn", {"pass with warnings", "#9a6700"}},
      {"fail", {"FAIL", "#cf222e"}},
      {"error", {"ERROR (not measured)", "#8250df"}},
      {"expected_fail", {"failed as expected", "#1a7f37"}},
      {"unexpected_pass", {"UNEXPECTED PASS", "#cf222e"}},
      {"not_run", {"not run", "#6e7781"}},
      {"skipped", {"skipped", "#6e7781"}}};
  const auto it = looks.find(outcome);
  return it == looks.end() ? OutcomeLook{"?", "#6e7781"} : it->second;
}

std::string badge(const std::string& outcome) {
  const OutcomeLook l = look(outcome);
  return fmt::format("<span class=\"badge\" style=\"background:{}\">{}</span>", l.colour,
                     esc(l.label));
}

std::string number_text(const nlohmann::json& v) {
  if (!v.is_number()) return "-";
  return format_number(v.get<double>());
}

std::string meta_section(const nlohmann::json& run) {
  const auto row = [](std::string_view k, const std::string& v) {
    return fmt::format("<tr><td>{}</td><td>{}</td></tr>\n", esc(k), esc(v));
  };
  const nlohmann::json& suite = member(run, "suite");
  const nlohmann::json& inventory = member(run, "inventory");
  std::string out = "<table class=\"meta\">\n";
  out += row("run", text(run, "run_id"));
  out += row("suite", fmt::format("{} ({})", text(suite, "name"), text(suite, "file")));
  out += row("inventory", text(inventory, "file"));
  out += row("started", text(run, "started_at"));
  out += row("finished",
             member(run, "finished_at").is_string() ? text(run, "finished_at") : "not finished");
  out += row("rocehil", text(run, "rocehil_version"));
  out += row("command", text(run, "command_line"));
  if (const nlohmann::json& kind = member(run, "kind"); kind.is_string())
    out += row("kind", kind.get<std::string>() == "only"
                           ? fmt::format("only (--only {})", text(run, "only"))
                           : kind.get<std::string>());
  if (const nlohmann::json& b = member(run, "baseline"); b.is_object())
    out += row("baseline",
               text(b, "asked") == text(b, "run_id")
                   ? fmt::format("run {} of {} (from {})", text(b, "run_id"), text(b, "started_at"),
                                 text(b, "origin"))
                   : fmt::format("run {} of {} ({} from {})", text(b, "run_id"),
                                 text(b, "started_at"), text(b, "asked"), text(b, "origin")));
  const nlohmann::json& code = member(run, "exit_code");
  out += row("exit code", code.is_number() ? std::to_string(code.get<int>()) : "-");
  if (member(run, "interrupted").is_boolean() && member(run, "interrupted").get<bool>())
    out += row("interrupted", "yes: cases after the signal were not run");
  return out + "</table>\n";
}

std::string why_measured(const RepeatsSummary& s);

// What a reader of the summary needs to know about a case that did not pass: the repeat that
// measured nothing, or each threshold that did not pass with its worst repeat.
std::string why(const nlohmann::json& c, const RepeatsSummary& s) {
  if (const std::string reason = text(c, "skip_reason"); !reason.empty()) return reason;
  std::string starved;
  for (const std::string& line : starved_reasons(case_record(c)))
    starved += (starved.empty() ? "CPU-starved: " : "; ") + line;
  if (!starved.empty()) {
    const std::string rest = why_measured(s);
    return rest.empty() ? starved : starved + "; " + rest;
  }
  return why_measured(s);
}

std::string why_measured(const RepeatsSummary& s) {
  if (s.error) {
    std::string out = fmt::format("{}: {}: {}", s.error->host.empty() ? "-" : s.error->host,
                                  s.error->phase, s.error->message);
    if (s.repeats > 1) out = fmt::format("repeat {} of {}: {}", s.error_repeat + 1, s.repeats, out);
    return out;
  }
  std::string out;
  for (const ThresholdOverRepeats& t : s.thresholds) {
    if (t.worst.evaluation.verdict == suites::Verdict::pass) continue;
    if (!out.empty()) out += "; ";
    out += fmt::format("{}: {}", suites::to_string(t.worst.evaluation.verdict),
                       threshold_text(t, s.repeats));
  }
  return out;
}

std::string summary_section(const nlohmann::json& run) {
  const nlohmann::json& s = member(run, "summary");
  std::string out = fmt::format("<p><strong>{}</strong></p>\n", esc(text(s, "text")));
  out +=
      "<table>\n<tr><th>case</th><th>outcome</th><th>result</th><th>repeats</th><th>why</th>"
      "</tr>\n";
  for (const auto& c : list(run, "cases")) {
    const RepeatsSummary repeats = summarize_repeats(case_record(c));
    std::string count = std::to_string(repeats.repeats);
    if (repeats.retries > 0) count += fmt::format(" ({})", retries_text(repeats.retries));
    out += fmt::format(
        "<tr><td><a href=\"#test-{}\">{}</a></td><td>{}</td><td>{}</td><td class=\"num\">{}</td>"
        "<td>{}</td></tr>\n",
        esc(text(c, "test")), esc(text(c, "id")), badge(text(c, "outcome")),
        esc(headline_text(repeats)), esc(count), esc(why(c, repeats)));
  }
  return out + "</table>\n";
}

// A threshold's measured value or limit with its metric's unit ("0.25 Gbit/s"), or "-".
std::string with_unit(const nlohmann::json& v, const std::string& threshold) {
  if (!v.is_number()) return "-";
  const std::string metric = threshold.substr(0, threshold.find_first_of(" <>=!["));
  const suites::MetricInfo* info = suites::find_metric(metric);
  const std::string unit = info == nullptr ? std::string() : std::string(info->unit);
  // "Gbit/s or us" (a calibration's) names no one unit; "ranks" and "frames" read as counts.
  if (unit.empty() || unit.find(' ') != std::string::npos) return number_text(v);
  return fmt::format("{} {}", number_text(v), unit);
}

std::string thresholds_table(const nlohmann::json& attempt) {
  const nlohmann::json& error = member(attempt, "error");
  if (error.is_object())
    return fmt::format("<p class=\"error\">not measured: {} in phase {}: {}</p>\n",
                       esc(text(error, "host").empty() ? "no single host" : text(error, "host")),
                       esc(text(error, "phase")), esc(text(error, "message")));
  const nlohmann::json& thresholds = list(member(attempt, "grade"), "thresholds");
  if (thresholds.empty()) return "<p>no thresholds graded</p>\n";
  std::string out =
      "<table>\n<tr><th>threshold</th><th>verdict</th><th>if not met</th><th>measured</th>"
      "<th>limit</th><th>detail</th></tr>\n";
  for (const auto& t : thresholds) {
    const std::string verdict = text(t, "verdict");
    out += fmt::format(
        "<tr><td><code>{}</code></td><td class=\"{}\">{}</td><td>{}</td><td class=\"num\">{}</td>"
        "<td class=\"num\">{}</td><td>{}</td></tr>\n",
        esc(text(t, "threshold")), esc(verdict), esc(verdict),
        text(t, "level") == "warn" ? "warns" : "fails the case",
        with_unit(member(t, "measured"), text(t, "threshold")),
        with_unit(member(t, "limit"), text(t, "threshold")), esc(text(t, "detail")));
  }
  return out + "</table>\n";
}

// What bent timing over an attempt's traffic, per host and the controller, and the flag when it
// may have bent the case's numbers. A value the kernel did not give is "-", never 0.
std::string cpu_table(const nlohmann::json& attempt) {
  const nlohmann::json& cpu = member(attempt, "cpu");
  std::string out;
  std::string starved;
  for (const auto& why : list(attempt, "cpu_starved"))
    if (why.is_string()) starved += "<li>" + esc(why.get<std::string>()) + "</li>";
  if (!starved.empty())
    out +=
        "<p class=\"error\">CPU-starved: its timing numbers may be the scheduler's, not the "
        "fabric's</p>\n<ul>" +
        starved + "</ul>\n";
  if (!cpu.is_object() || cpu.empty()) return out;
  const auto cell = [](const nlohmann::json& j, const char* key, double scale, const char* unit) {
    const nlohmann::json& v = member(j, key);
    if (!v.is_number()) return std::string("-");
    return fmt::format("{:.3g}{}", v.get<double>() * scale, unit);
  };
  out +=
      "<table>\n<tr><th>scheduling</th><th>woke late p50 / p99 / max</th><th>longest thread "
      "wait</th><th>steal</th><th>PSI some</th><th>run queue (CPUs)</th></tr>\n";
  for (const auto& [who, j] : cpu.items())
    out += fmt::format(
        "<tr><td>{}</td><td class=\"num\">{} / {} / {}</td><td class=\"num\">{}</td>"
        "<td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{} ({})</td>"
        "</tr>\n",
        esc(who), cell(j, "wake_late_p50_us", 1, " us"), cell(j, "wake_late_p99_us", 1, " us"),
        cell(j, "wake_late_max_us", 1, " us"), cell(j, "thread_wait_max_ms", 1, " ms"),
        cell(j, "steal_share", 100, "%"), cell(j, "pressure_some_share", 100, "%"),
        cell(j, "run_queue_max", 1, ""), cell(j, "cpus", 1, ""));
  return out + "</table>\n";
}

std::string case_section(const nlohmann::json& c) {
  std::string out = fmt::format("<h3>{} {}</h3>\n", esc(text(c, "id")), badge(text(c, "outcome")));
  if (const auto& p = member(c, "parameters"); p.is_object() && !p.empty()) {
    std::string params;
    for (const auto& [k, v] : p.items())
      params += fmt::format("{}{}={}", params.empty() ? "" : ", ", k,
                            v.is_string() ? v.get<std::string>() : v.dump());
    out += fmt::format("<p>{}; hosts {}</p>\n", esc(params), esc(member(c, "hosts").dump()));
  }
  if (const std::string reason = text(c, "skip_reason"); !reason.empty())
    out += fmt::format("<p>skipped: {}</p>\n", esc(reason));
  const nlohmann::json& attempts = list(c, "attempts");
  const RepeatsSummary repeats = summarize_repeats(case_record(c));
  if (const std::string h = headline_text(repeats); !h.empty())
    out += fmt::format("<p>{}</p>\n", esc(h));
  // Repeats are numbered from 1 for people; a retry is an attempt of its repeat run again.
  int attempt_of_repeat = 0;
  for (std::size_t i = 0; i < attempts.size(); ++i) {
    const nlohmann::json& a = attempts[i];
    const auto repeat = number(a, "repeat");
    attempt_of_repeat =
        i > 0 && number(attempts[i - 1], "repeat") == repeat ? attempt_of_repeat + 1 : 1;
    const bool retried = attempt_of_repeat > 1 ||
                         (i + 1 < attempts.size() && number(attempts[i + 1], "repeat") == repeat);
    std::string heading;
    if (repeats.repeats > 1)
      heading =
          fmt::format("repeat {} of {}", static_cast<int>(repeat.value_or(0)) + 1, repeats.repeats);
    if (retried)
      heading += fmt::format("{}attempt {}{}", heading.empty() ? "" : ", ", attempt_of_repeat,
                             attempt_of_repeat > 1 ? " (retried after a failure)" : "");
    if (!heading.empty()) out += fmt::format("<p>{}:</p>\n", esc(heading));
    out += thresholds_table(a);
    out += cpu_table(a);
    out += nic_counters_table(a);
    out += switch_ports_table(a);
    out += kept_captures_list(a);
  }
  return out + case_charts(c);
}

std::string tests_section(const nlohmann::json& run) {
  // Cases grouped by test, tests in the order they first appear.
  std::vector<std::string> order;
  std::map<std::string, std::vector<const nlohmann::json*>> by_test;
  for (const auto& c : list(run, "cases")) {
    const std::string test = text(c, "test");
    if (!by_test.contains(test)) order.push_back(test);
    by_test[test].push_back(&c);
  }
  std::string out;
  for (const auto& test : order) {
    out += fmt::format("<section id=\"test-{}\">\n<h2>{}</h2>\n", esc(test), esc(test));
    out += test_charts(by_test[test]);
    for (const nlohmann::json* c : by_test[test]) out += case_section(*c);
    out += "</section>\n";
  }
  return out;
}

std::string priorities_text(const nlohmann::json& p) {
  if (p.is_null()) return "-";
  if (!p.is_array()) return p.dump();
  std::string out;
  for (const auto& v : p) {
    if (!out.empty()) out += ",";
    out += v.dump();
  }
  return out.empty() ? "none" : out;
}

std::string preflight_section(const nlohmann::json& run) {
  const nlohmann::json& inventory = member(run, "inventory");
  std::string out = "<h2>Inventory and preflight</h2>\n";
  out +=
      "<table>\n<tr><th>host</th><th>verdict</th><th>kernel</th><th>agent</th><th>RDMA device "
      "firmware</th><th>netdev</th><th>mtu</th><th>speed Mb/s</th><th>driver / firmware</th>"
      "<th>ECN NP</th><th>ECN RP</th><th>PFC</th><th>trust</th></tr>\n";
  for (const auto& h : list(member(inventory, "preflight"), "hosts")) {
    const nlohmann::json& facts = member(h, "facts");
    std::string rdma;
    for (const auto& d : list(facts, "rdma"))
      rdma += fmt::format("{}{} {}", rdma.empty() ? "" : "<br>", esc(text(d, "name")),
                          esc(text(d, "fw_ver")));
    const nlohmann::json& netdevs = list(facts, "netdevs");
    const std::size_t rows = std::max<std::size_t>(1, netdevs.size());
    for (std::size_t i = 0; i < rows; ++i) {
      out += "<tr>";
      if (i == 0)
        out += fmt::format(
            "<td rowspan=\"{0}\">{1}</td><td rowspan=\"{0}\">{2}</td><td rowspan=\"{0}\">{3}</td>"
            "<td rowspan=\"{0}\">{4}</td><td rowspan=\"{0}\">{5}</td>",
            rows, esc(text(h, "name")), esc(text(h, "verdict")), esc(text(facts, "kernel")),
            esc(text(facts, "agent_version")), rdma.empty() ? "-" : rdma);
      if (i < netdevs.size()) {
        const nlohmann::json& n = netdevs[i];
        out += fmt::format(
            "<td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td>{} {}</td>"
            "<td>{}</td><td>{}</td><td>{}</td><td>{}</td>",
            esc(text(n, "name")), number_text(member(n, "mtu")),
            number_text(member(n, "speed_mbps")), esc(text(n, "driver")), esc(text(n, "firmware")),
            esc(priorities_text(member(n, "ecn_np"))), esc(priorities_text(member(n, "ecn_rp"))),
            esc(priorities_text(member(n, "pfc"))), esc(text(n, "trust")));
      } else {
        out += "<td colspan=\"8\">no netdev facts</td>";
      }
      out += "</tr>\n";
    }
  }
  out += "</table>\n";
  out += fmt::format("<details><summary>inventory {}</summary><pre>{}</pre></details>\n",
                     esc(text(inventory, "file")), esc(text(inventory, "text")));
  const nlohmann::json& suite = member(run, "suite");
  out += fmt::format("<details><summary>suite {}</summary><pre>{}</pre></details>\n",
                     esc(text(suite, "file")), esc(text(suite, "text")));
  return out;
}

// What the run set on the fabric (--set, the suite's settings:), as read back once set, whether
// each held to the end, and what it changed from; nothing when the run set nothing.
std::string settings_section(const nlohmann::json& run) {
  const nlohmann::json& settings = member(run, "settings");
  const nlohmann::json& in_force = list(settings, "in_force");
  if (in_force.empty()) return "";
  std::map<std::string, std::string> before;  // "host netdev name" -> value before the run
  for (const auto& c : list(settings, "changes"))
    before[text(c, "host") + " " + text(c, "netdev") + " " + text(c, "name")] = text(c, "before");
  std::string out = "<h2>Settings in force</h2>\n<p>What the run set, read back once set";
  const nlohmann::json& restored = member(settings, "restored");
  out += restored.is_boolean()
             ? (restored.get<bool>() ? "; put back as they were at its end"
                                     : "; <span class=\"fail\">not put back at "
                                       "its end</span> (rocehil settings restore)")
             : "";
  out +=
      ".</p>\n<table><tr><th>host</th><th>netdev</th><th>setting</th><th>value</th>"
      "<th>before the run</th><th>held</th></tr>\n";
  for (const auto& v : in_force) {
    const std::string host = text(v, "host"), netdev = text(v, "netdev"), name = text(v, "name");
    const auto was = before.find(host + " " + netdev + " " + name);
    const nlohmann::json& held = member(v, "held");
    const std::string held_text =
        held == false
            ? fmt::format("<span class=\"fail\">no: read {} later</span>", esc(text(v, "found")))
            : std::string("yes");
    out += fmt::format(
        "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n",
        esc(host.empty() ? "switches" : host), esc(netdev), esc(name), esc(text(v, "value")),
        esc(was == before.end() ? "(unchanged)" : was->second), held_text);
  }
  return out + "</table>\n";
}

}  // namespace

std::string html_report(const nlohmann::json& run) {
  const std::string title =
      fmt::format("rocehil: {} {}", text(member(run, "suite"), "name"), text(run, "run_id"));
  std::string out = fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      "<title>{}</title>\n<style>{}</style>\n</head>\n<body>\n<h1>{}</h1>\n",
      esc(title), page_style, esc(title));
  out += meta_section(run);
  out += summary_section(run);
  out += tests_section(run);
  out += settings_section(run);
  out += preflight_section(run);
  return out + "</body>\n</html>\n";
}

}  // namespace rocehil::reports
