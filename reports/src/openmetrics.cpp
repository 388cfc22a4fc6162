#include "rocehil/reports/openmetrics.hpp"

#include <fmt/format.h>

#include <cctype>
#include <ctime>
#include <map>

#include "rocehil/reports/comparison.hpp"

namespace rocehil::reports {

namespace {

std::string label_value(std::string_view v) {
  std::string out;
  for (const char c : v) {
    if (c == '\\' || c == '"') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}

// Metric names allow [a-zA-Z0-9_:]; anything else in a rocehil metric name becomes '_'.
std::string family_name(std::string_view metric) {
  std::string out = "rocehil_";
  for (const char c : metric)
    out += std::isalnum(static_cast<unsigned char>(c)) || c == '_' ? c : '_';
  return out;
}

// 2026-11-22T18:45:01Z as Unix seconds; empty when it does not read as that.
std::optional<std::int64_t> unix_seconds(const std::string& iso) {
  std::tm tm{};
  int consumed = 0;
  if (std::sscanf(iso.c_str(), "%4d-%2d-%2dT%2d:%2d:%2dZ%n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
                  &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &consumed) != 6 ||
      static_cast<std::size_t>(consumed) != iso.size())
    return std::nullopt;
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  return static_cast<std::int64_t>(timegm(&tm));
}

struct Family {
  std::string help;
  std::vector<std::string> samples;  // "{labels} value"
};

class Writer {
 public:
  void add(const std::string& name, std::string help, const std::string& labels, double value) {
    Family& f = families_[name];
    if (f.help.empty()) f.help = std::move(help);
    f.samples.push_back(fmt::format("{{{}}} {}", labels, value));  // shortest exact text
  }
  std::string text() const {
    std::string out;
    for (const auto& [name, f] : families_) {
      out += fmt::format("# TYPE {} gauge\n# HELP {} {}\n", name, name, f.help);
      for (const auto& s : f.samples) out += name + s + "\n";
    }
    return out + "# EOF\n";
  }

 private:
  std::map<std::string, Family> families_;  // a family's samples must be together
};

}  // namespace

std::string to_openmetrics(const History::RunSnapshot& run) {
  Writer w;
  const std::string suite = fmt::format("suite=\"{}\"", label_value(run.row.suite));
  if (run.row.exit_code)
    w.add("rocehil_run_exit_code", "How rocehil run exited: 0 passed, 1 failed, 3 not measured.",
          suite, *run.row.exit_code);
  if (const auto t = unix_seconds(run.row.started_at))
    w.add("rocehil_run_start_time_seconds", "When the run started.", suite,
          static_cast<double>(*t));
  std::map<std::string, int> by_outcome{{"pass", 0},          {"warn", 0},
                                        {"fail", 0},          {"error", 0},
                                        {"expected_fail", 0}, {"unexpected_pass", 0},
                                        {"not_run", 0},       {"skipped", 0}};
  for (const auto& c : run.cases) ++by_outcome[c.outcome];
  for (const auto& [outcome, n] : by_outcome)
    w.add("rocehil_run_cases", "Test cases of the run by outcome.",
          fmt::format("{},outcome=\"{}\"", suite, label_value(outcome)), n);
  for (const auto& c : run.cases) {
    const std::string labels =
        fmt::format("{},case=\"{}\",test=\"{}\"", suite, label_value(c.id), label_value(c.test));
    w.add("rocehil_case_outcome", "The outcome of each test case (the sample is 1).",
          fmt::format("{},outcome=\"{}\"", labels, label_value(c.outcome)), 1);
    const auto measured = run.samples.find(c.id);
    if (measured == run.samples.end()) continue;
    std::size_t repeats = 0;
    for (const auto& [metric, values] : measured->second) {
      repeats = std::max(repeats, values.size());
      std::string name = metric, extra;
      if (const auto bracket = metric.find('['); bracket != std::string::npos) {
        name = metric.substr(0, bracket);
        // [3] is a priority, [dscp=26] a DSCP: each its own label.
        std::string index = metric.substr(bracket + 1, metric.size() - bracket - 2);
        std::string label = "priority";
        if (index.starts_with("dscp=")) {
          label = "dscp";
          index = index.substr(5);
        }
        extra = fmt::format(",{}=\"{}\"", label, label_value(index));
      }
      w.add(family_name(name),
            fmt::format("{} of each test case, the median of its repeats.", name), labels + extra,
            median(values));
    }
    w.add("rocehil_case_repeats", "Repeats of each test case that measured something.", labels,
          static_cast<double>(repeats));
  }
  return w.text();
}

}  // namespace rocehil::reports
