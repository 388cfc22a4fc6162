#include "rocehil/reports/run_json.hpp"

#include <cmath>

#include "json_view.hpp"
#include "rocehil/reports/repeats.hpp"

namespace rocehil::reports {

namespace {

nlohmann::json json_number(double v) {
  return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr);
}

nlohmann::json json_number(const std::optional<double>& v) {
  return v ? json_number(*v) : nlohmann::json(nullptr);
}

nlohmann::json values_json(const suites::Values& values) {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& [key, value] : values) out[key] = json_number(value);
  return out;
}

// A value the host's kernel did not give is left out, never written as 0.
nlohmann::json scheduling_json(const SchedulingReport& r) {
  nlohmann::json out = {{"seconds", json_number(r.seconds)},
                        {"cpus", r.cpus},
                        {"wakeups", r.wakeups},
                        {"wake_late_p50_us", json_number(r.wake_late_p50_us)},
                        {"wake_late_p99_us", json_number(r.wake_late_p99_us)},
                        {"wake_late_max_us", json_number(r.wake_late_max_us)}};
  const auto optional = [&out](const char* key, const std::optional<double>& v) {
    if (v) out[key] = json_number(*v);
  };
  optional("thread_wait_max_ms", r.thread_wait_max_ms);
  optional("threads_wait_ms", r.threads_wait_ms);
  optional("steal_share", r.steal_share);
  optional("pressure_some_share", r.pressure_some_share);
  optional("pressure_some_avg10", r.pressure_some_avg10);
  if (r.run_queue_max) out["run_queue_max"] = *r.run_queue_max;
  optional("load1", r.load1);
  return out;
}

nlohmann::json attempt_json(const Attempt& a) {
  nlohmann::json out = {{"repeat", a.repeat},
                        {"start_ns", a.start_ns},
                        {"seconds", json_number(a.seconds)},
                        {"error", nullptr},
                        {"metrics", values_json(a.metrics)},
                        {"unmeasured", a.unmeasured},
                        {"where", a.where},
                        {"grade", nullptr},
                        {"raw", a.raw}};
  if (a.error)
    out["error"] = {{"host", a.error->host},
                    {"phase", a.error->phase},
                    {"message", a.error->message},
                    {"fault", to_string(a.error->fault)}};
  if (a.grade) out["grade"] = to_json(*a.grade);
  nlohmann::json kept = nlohmann::json::array();
  for (const KeptCapture& k : a.captures_kept) {
    nlohmann::json entry = {
        {"point", k.point}, {"host", k.host}, {"files", k.files}, {"bytes", k.bytes}};
    if (!k.not_kept.empty()) entry["not_kept"] = k.not_kept;
    kept.push_back(std::move(entry));
  }
  out["captures_kept"] = std::move(kept);
  nlohmann::json cpu = nlohmann::json::object();
  for (const suites::SchedulingSeen& s : a.cpu) cpu[s.who] = scheduling_json(s.cpu);
  out["cpu"] = std::move(cpu);
  out["cpu_starved"] = a.cpu_starved;
  return out;
}

// What the case's repeats come to (repeats.hpp), for whoever reads run.json rather than
// recomputing it: the median and spread of the headline, each threshold by its worst repeat.
nlohmann::json summary_json(const CaseRecord& c) {
  const RepeatsSummary s = summarize_repeats(c);
  nlohmann::json headline = nullptr;
  if (s.headline)
    headline = {{"metric", s.headline->metric},
                {"label", s.headline->label},
                {"unit", s.headline->unit},
                {"median", s.headline->spread.median},
                {"low", s.headline->spread.low},
                {"high", s.headline->spread.high},
                {"samples", s.headline->spread.samples},
                {"text", headline_text(s)}};
  nlohmann::json thresholds = nlohmann::json::array();
  for (const ThresholdOverRepeats& t : s.thresholds)
    thresholds.push_back({{"threshold", t.worst.threshold},
                          {"verdict", std::string(suites::to_string(t.worst.evaluation.verdict))},
                          {"repeat", t.repeat},
                          {"graded", t.graded},
                          {"at_verdict", t.at_verdict},
                          {"measured", json_number(t.worst.evaluation.measured)},
                          {"limit", json_number(t.worst.evaluation.limit)},
                          {"text", threshold_text(t, s.repeats)}});
  nlohmann::json error = nullptr;
  if (s.error)
    error = {{"repeat", s.error_repeat},
             {"host", s.error->host},
             {"phase", s.error->phase},
             {"message", s.error->message},
             {"fault", to_string(s.error->fault)}};
  return {{"repeats", s.repeats},
          {"retries", s.retries},
          {"headline", headline},
          {"thresholds", thresholds},
          {"error", error}};
}

suites::Verdict verdict_named(const std::string& name) {
  for (const auto v : {suites::Verdict::pass, suites::Verdict::warn, suites::Verdict::fail,
                       suites::Verdict::error})
    if (suites::to_string(v) == name) return v;
  return suites::Verdict::error;
}

}  // namespace

CaseRecord case_record(const nlohmann::json& c) {
  CaseRecord out;
  out.id = text(c, "id");
  out.test = text(c, "test");
  out.workload = text(c, "workload");
  out.skip_reason = text(c, "skip_reason");
  out.fabric_settings = member(c, "fabric_settings");
  const nlohmann::json& expect_fail = member(c, "expect_fail");
  out.expect_fail = expect_fail.is_boolean() && expect_fail.get<bool>();
  for (const nlohmann::json& a : list(c, "attempts")) {
    Attempt attempt;
    attempt.repeat = static_cast<int>(number(a, "repeat").value_or(0));
    attempt.seconds = number(a, "seconds").value_or(0);
    if (const nlohmann::json& e = member(a, "error"); e.is_object())
      // A run.json older than `fault` knew no fabric faults: its errors were all the harness's.
      attempt.error = AttemptError{
          text(e, "host"), text(e, "phase"), text(e, "message"),
          text(e, "fault") == to_string(Fault::fabric) ? Fault::fabric : Fault::infrastructure};
    if (const nlohmann::json& m = member(a, "metrics"); m.is_object())
      for (const auto& [key, value] : m.items())
        if (value.is_number()) attempt.metrics[key] = value.get<double>();
    if (const nlohmann::json& g = member(a, "grade"); g.is_object()) {
      suites::CaseGrade grade;
      grade.verdict = verdict_named(text(g, "verdict"));
      for (const nlohmann::json& t : list(g, "thresholds")) {
        suites::ThresholdResult r;
        r.threshold = text(t, "threshold");
        r.level = text(t, "level") == "warn" ? suites::Level::warn : suites::Level::fail;
        // run.json keeps the text as written; its comparison is read from it again.
        if (const auto parsed = suites::parse_threshold(r.threshold); parsed.threshold)
          r.op = parsed.threshold->op;
        r.evaluation.verdict = verdict_named(text(t, "verdict"));
        r.evaluation.measured = number(t, "measured");
        r.evaluation.limit = number(t, "limit");
        r.evaluation.detail = text(t, "detail");
        grade.results.push_back(std::move(r));
      }
      for (const nlohmann::json& why : list(g, "starved"))
        if (why.is_string()) grade.starved.push_back(why.get<std::string>());
      attempt.grade = std::move(grade);
    }
    for (const nlohmann::json& why : list(a, "cpu_starved"))
      if (why.is_string()) attempt.cpu_starved.push_back(why.get<std::string>());
    out.attempts.push_back(std::move(attempt));
  }
  return out;
}

nlohmann::json to_json(const suites::CaseGrade& grade) {
  nlohmann::json thresholds = nlohmann::json::array();
  for (const auto& r : grade.results)
    thresholds.push_back({{"threshold", r.threshold},
                          {"level", std::string(suites::to_string(r.level))},
                          {"verdict", std::string(suites::to_string(r.evaluation.verdict))},
                          {"measured", json_number(r.evaluation.measured)},
                          {"limit", json_number(r.evaluation.limit)},
                          {"detail", r.evaluation.detail}});
  nlohmann::json out = {{"verdict", std::string(suites::to_string(grade.verdict))},
                        {"thresholds", thresholds}};
  if (!grade.starved.empty()) out["starved"] = grade.starved;
  return out;
}

nlohmann::json to_json(const CaseRecord& c) {
  nlohmann::json attempts = nlohmann::json::array();
  for (const auto& a : c.attempts) attempts.push_back(attempt_json(a));
  return {{"id", c.id},
          {"test", c.test},
          {"workload", c.workload},
          {"parameters", c.parameters},
          {"hosts", c.hosts},
          {"captures", c.captures},
          {"expect_fail", c.expect_fail},
          {"names", values_json(c.names)},
          {"outcome", std::string(suites::to_string(c.outcome))},
          {"skip_reason",
           c.skip_reason.empty() ? nlohmann::json(nullptr) : nlohmann::json(c.skip_reason)},
          {"summary", summary_json(c)},
          {"fabric_settings", c.fabric_settings},
          {"attempts", attempts}};
}

nlohmann::json to_json(const RunRecord& run) {
  const OutcomeCounts n = count_outcomes(run);
  nlohmann::json cases = nlohmann::json::array();
  for (const auto& c : run.cases) cases.push_back(to_json(c));
  return {
      {"schema_version", run_schema_version},
      {"run_id", run.run_id},
      {"started_at", run.started_at},
      {"finished_at",
       run.finished_at.empty() ? nlohmann::json(nullptr) : nlohmann::json(run.finished_at)},
      {"rocehil_version", run.rocehil_version},
      {"command_line", run.command_line},
      {"kind", std::string(to_string(run.kind.kind))},
      {"only", run.kind.only.empty() ? nlohmann::json(nullptr) : nlohmann::json(run.kind.only)},
      {"set", run.kind.set},
      {"suite", {{"file", run.suite_file}, {"name", run.suite_name}, {"text", run.suite_text}}},
      {"inventory",
       {{"file", run.inventory_file}, {"text", run.inventory_text}, {"preflight", run.preflight}}},
      {"settings", run.fabric_settings},
      {"baseline", run.baseline},
      {"interrupted", run.interrupted},
      {"exit_code", run.exit_code ? nlohmann::json(*run.exit_code) : nlohmann::json(nullptr)},
      {"summary",
       {{"pass", n.pass},
        {"warn", n.warn},
        {"fail", n.fail},
        {"error", n.error},
        {"expected_fail", n.expected_fail},
        {"unexpected_pass", n.unexpected_pass},
        {"not_run", n.not_run},
        {"skipped", n.skipped},
        {"text", summary_line(n)}}},
      {"cases", cases}};
}

}  // namespace rocehil::reports
