#include "rocehil/reports/run_json.hpp"

#include <cmath>

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
    out["error"] = {
        {"host", a.error->host}, {"phase", a.error->phase}, {"message", a.error->message}};
  if (a.grade) out["grade"] = to_json(*a.grade);
  nlohmann::json kept = nlohmann::json::array();
  for (const KeptCapture& k : a.captures_kept) {
    nlohmann::json entry = {
        {"point", k.point}, {"host", k.host}, {"files", k.files}, {"bytes", k.bytes}};
    if (!k.not_kept.empty()) entry["not_kept"] = k.not_kept;
    kept.push_back(std::move(entry));
  }
  out["captures_kept"] = std::move(kept);
  return out;
}

}  // namespace

nlohmann::json to_json(const suites::CaseGrade& grade) {
  nlohmann::json thresholds = nlohmann::json::array();
  for (const auto& r : grade.results)
    thresholds.push_back({{"threshold", r.threshold},
                          {"level", std::string(suites::to_string(r.level))},
                          {"verdict", std::string(suites::to_string(r.evaluation.verdict))},
                          {"measured", json_number(r.evaluation.measured)},
                          {"limit", json_number(r.evaluation.limit)},
                          {"detail", r.evaluation.detail}});
  return {{"verdict", std::string(suites::to_string(grade.verdict))}, {"thresholds", thresholds}};
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
