#include "rocehil/run/drain.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "rocehil/remote/run_command.hpp"
#include "rocehil/remote/slurm.hpp"
#include "rocehil/reports/repeats.hpp"

namespace rocehil::run {

namespace {

// What failed in a case, in the words of the repeat that measured nothing or of its failed
// thresholds' worst repeats: the repeats that decided the outcome, not whichever ran last.
std::string what_failed(const reports::RepeatsSummary& s) {
  if (s.error) return fmt::format("{}: {}", s.error->phase, s.error->message);
  std::string out;
  for (const auto& t : s.thresholds)
    if (t.worst.evaluation.verdict == suites::Verdict::fail ||
        t.worst.evaluation.verdict == suites::Verdict::error)
      out += (out.empty() ? "" : "; ") + t.worst.evaluation.detail;
  return out.empty() ? "failed" : out;
}

// The string at `key`; none when the record has another shape.
std::optional<std::string> string_at(const nlohmann::json& j, const char* key) {
  const auto it = j.find(key);
  if (it == j.end() || !it->is_string()) return std::nullopt;
  return it->get<std::string>();
}

// The same, for a reason's words: "?" stands in for what the record does not say.
std::string text_of(const nlohmann::json& j, const char* key) {
  return string_at(j, key).value_or("?");
}

// The hosts the run could not use at all, each for its own failure: unreachable or failed in
// the preflight (run.json's preflight.hosts), or whose agent did not dial in (preflight.agents).
template <typename Add>
void add_hosts_not_reached(const nlohmann::json& preflight, std::string_view tag, Add add_named) {
  if (!preflight.is_object()) return;
  const auto add = [&](const std::optional<std::string>& node, const std::string& reason) {
    if (node) add_named(*node, reason);  // a record of another shape names no node
  };
  if (const auto hosts = preflight.find("hosts"); hosts != preflight.end() && hosts->is_array())
    for (const nlohmann::json& h : *hosts) {
      const std::string verdict = text_of(h, "verdict");
      if (verdict == "unreachable") {
        add(string_at(h, "name"),
            fmt::format("rocehil: {}: preflight: unreachable: {}", tag, text_of(h, "unreachable")));
      } else if (verdict == "failed") {
        std::vector<std::string> failed;
        if (const auto checks = h.find("checks"); checks != h.end() && checks->is_array())
          for (const nlohmann::json& c : *checks)
            if (text_of(c, "status") == "fail")
              failed.push_back(fmt::format("{}: {}", text_of(c, "name"), text_of(c, "detail")));
        add(string_at(h, "name"),
            fmt::format("rocehil: {}: preflight: {}", tag, fmt::join(failed, "; ")));
      }
    }
  if (const auto agents = preflight.find("agents");
      agents != preflight.end() && agents->is_object())
    if (const auto missing = agents->find("missing");
        missing != agents->end() && missing->is_array())
      for (const nlohmann::json& m : *missing)
        add(string_at(m, "host"),
            fmt::format("rocehil: {}: its agent did not dial in: {}", tag, text_of(m, "why")));
}

}  // namespace

DrainPlan plan_drain(const reports::RunRecord& record, std::string_view tag) {
  DrainPlan plan;
  const auto add = [&](const std::string& node, const std::string& reason) {
    if (std::none_of(plan.drain.begin(), plan.drain.end(),
                     [&](const DrainTarget& t) { return t.node == node; }))
      plan.drain.push_back({node, reason});
  };
  add_hosts_not_reached(record.preflight, tag, add);
  for (const reports::CaseRecord& c : record.cases) {
    if (c.outcome != suites::Outcome::fail && c.outcome != suites::Outcome::error) continue;
    if (c.attempts.empty()) continue;
    const reports::RepeatsSummary s = reports::summarize_repeats(c);
    const std::string reason = fmt::format("rocehil: {}: {}: {}", tag, c.id, what_failed(s));
    if (s.error && !s.error->host.empty())
      add(s.error->host, reason);
    else if (c.hosts.size() == 1)
      add(c.hosts.front(), reason);
    else
      plan.not_drained.push_back(fmt::format("{}: {} names no single node of {}", c.id,
                                             what_failed(s), fmt::join(c.hosts, ",")));
  }
  return plan;
}

std::vector<DrainResult> drain_nodes(const std::vector<DrainTarget>& targets) {
  std::vector<DrainResult> out;
  for (const DrainTarget& t : targets) {
    DrainResult r{t, false, {}};
    const remote::CommandResult done =
        remote::run_command(remote::scontrol_drain_argv(t.node, t.reason), {});
    r.drained = done.succeeded();
    if (!r.drained) r.detail = done.reason();
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace rocehil::run
