#include "rocehil/run/drain.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "rocehil/remote/run_command.hpp"
#include "rocehil/remote/slurm.hpp"

namespace rocehil::run {

namespace {

// What failed in an attempt, in the words of its error or its failed thresholds.
std::string what_failed(const reports::Attempt& a) {
  if (a.error) return fmt::format("{}: {}", a.error->phase, a.error->message);
  std::string out;
  if (a.grade)
    for (const auto& r : a.grade->results)
      if (r.evaluation.verdict == suites::Verdict::fail ||
          r.evaluation.verdict == suites::Verdict::error)
        out += (out.empty() ? "" : "; ") + r.evaluation.detail;
  return out.empty() ? "failed" : out;
}

}  // namespace

DrainPlan plan_drain(const reports::RunRecord& record, std::string_view tag) {
  DrainPlan plan;
  const auto add = [&](const std::string& node, const std::string& reason) {
    if (std::none_of(plan.drain.begin(), plan.drain.end(),
                     [&](const DrainTarget& t) { return t.node == node; }))
      plan.drain.push_back({node, reason});
  };
  for (const reports::CaseRecord& c : record.cases) {
    if (c.outcome != suites::Outcome::fail && c.outcome != suites::Outcome::error) continue;
    if (c.attempts.empty()) continue;
    const reports::Attempt& last = c.attempts.back();
    const std::string reason = fmt::format("rocehil: {}: {}: {}", tag, c.id, what_failed(last));
    if (last.error && !last.error->host.empty())
      add(last.error->host, reason);
    else if (c.hosts.size() == 1)
      add(c.hosts.front(), reason);
    else
      plan.not_drained.push_back(fmt::format("{}: {} names no single node of {}", c.id,
                                             what_failed(last), fmt::join(c.hosts, ",")));
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
