#include "cases/parts.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <thread>

#include "rocehil/common/clock.hpp"
#include "rocehil/run/fairness.hpp"

namespace rocehil::run {

using case_traffic::PhaseFailure;
using case_traffic::TrafficOutcome;

namespace {

std::int64_t nanoseconds(double seconds) {
  return static_cast<std::int64_t>(std::llround(seconds * 1e9));
}

// One part's run: what it measured, and when its traffic was agreed to start and ended.
struct PartRun {
  TrafficOutcome outcome;
  std::optional<std::int64_t> start_ns;  // empty: it never reached the start
  std::int64_t end_ns = 0;
};

// The parts' outcomes as the case's: each part's metrics under its name, the rest together.
TrafficOutcome merged(const std::vector<PartCase>& cases, std::vector<PartRun>& runs) {
  TrafficOutcome all;
  all.raw["parts"] = nlohmann::json::array();
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const std::string& name = cases[i].part->name;
    TrafficOutcome& o = runs[i].outcome;
    const auto named = [&name](const std::string& key) { return fmt::format("{}.{}", name, key); };
    for (const auto& [key, value] : o.metrics.values) all.metrics.values[named(key)] = value;
    for (const auto& [key, why] : o.metrics.unmeasured) all.metrics.unmeasured[named(key)] = why;
    for (const auto& [key, at] : o.metrics.where) all.metrics.where[named(key)] = at;
    // CNPs per second of the part's own interval, as the case's is of its one workload's.
    if (const auto cnps = o.metrics.values.find("cnps"); cnps == o.metrics.values.end())
      all.metrics.absent(named("cnp_per_s"),
                         fmt::format("it needs {}, which was not measured", named("cnps")));
    else if (o.seconds > 0)
      all.metrics.values[named("cnp_per_s")] = cnps->second / o.seconds;
    else
      all.metrics.absent(named("cnp_per_s"), "the part reported no measured interval");
    std::move(o.nics.begin(), o.nics.end(), std::back_inserter(all.nics));
    std::move(o.events.begin(), o.events.end(), std::back_inserter(all.events));
    std::move(o.cpu.begin(), o.cpu.end(), std::back_inserter(all.cpu));
    std::move(o.cnps_sent.begin(), o.cnps_sent.end(), std::back_inserter(all.cnps_sent));
    for (SenderTimeline& t : o.timelines)
      all.timelines.push_back({fmt::format("{} (part {})", t.sender, name), std::move(t.timeline),
                               std::move(t.qp_stalls)});
    for (const std::string& h : o.hosts)
      if (std::find(all.hosts.begin(), all.hosts.end(), h) == all.hosts.end())
        all.hosts.push_back(h);
    if (all.cnps_unknown.empty() && !o.cnps_unknown.empty())
      all.cnps_unknown = fmt::format("part '{}': {}", name, o.cnps_unknown);
    all.seconds = std::max(all.seconds, o.seconds);
    all.interrupted = all.interrupted || o.interrupted;
    if (o.failure && !all.failure) {
      all.failure = o.failure;
      all.failure->message = fmt::format("part '{}': {}", name, o.failure->message);
    }
    all.raw["parts"].push_back(
        {{"name", name},
         {"workload", cases[i].test.workload},
         {"hosts", o.hosts},
         {"start_ns", runs[i].start_ns ? nlohmann::json(*runs[i].start_ns) : nullptr},
         {"end_ns", runs[i].end_ns},
         {"seconds", o.seconds},
         {"error", o.failure ? nlohmann::json(o.failure->message) : nullptr},
         {"traffic", std::move(o.raw)}});
  }
  // The case's CNPs are its parts': a threshold names the part's.
  all.metrics.absent("cnps", "in a test with parts, cnps is each part's (part.cnps)");
  // Fairness between the parts' senders (the plan's "Tx rate of rank0 and rank1 should be
  // fair", each rank a part): each bw part's delivered rate. A part's own fairness is among its
  // QPs (part.fairness_jain).
  std::vector<double> rates;
  std::string why;
  std::size_t bw_parts = 0;
  for (std::size_t i = 0; i < cases.size(); ++i) {
    if (cases[i].test.workload != "bw") continue;
    ++bw_parts;
    const auto& v = all.metrics.values;
    if (const auto rate = v.find(fmt::format("{}.algbw_gbps", cases[i].part->name));
        rate != v.end())
      rates.push_back(rate->second);
    else if (why.empty())
      why = fmt::format("part '{}' measured no rate", cases[i].part->name);
  }
  if (bw_parts < 2)
    why =
        "fairness between parts compares two bw parts or more; a part's own is among its QPs "
        "(part.fairness_jain)";
  add_fairness(all.metrics, rates, "bw parts' senders", why);
  if (all.metrics.values.contains("rate_deviation")) {
    std::vector<std::string> each;
    for (std::size_t i = 0, r = 0; i < cases.size() && r < rates.size(); ++i)
      if (cases[i].test.workload == "bw")
        each.push_back(fmt::format("{} {:.3g}", cases[i].part->name, rates[r++]));
    all.metrics.where["rate_deviation"] = fmt::format("Gbit/s: {}", fmt::join(each, ", "));
    all.metrics.where["fairness_jain"] = all.metrics.where["rate_deviation"];
  }
  return all;
}

}  // namespace

std::vector<PartCase> part_cases(const suites::SuiteTest& test, const suites::TestCase& tc) {
  std::vector<PartCase> out;
  out.reserve(test.parts.size());
  for (const suites::Part& p : test.parts) {
    PartCase pc;
    pc.part = &p;
    pc.test = suites::test_of_part(test, p);
    const suites::TestSettings& s = pc.test.settings;
    pc.test_case.id = fmt::format("{}/{}", tc.id, p.name);
    pc.test_case.test = tc.test;
    pc.test_case.size = s.sizes.front();
    pc.test_case.qps = s.qps.front();
    pc.test_case.strategy = s.strategies.front();
    pc.test_case.placement = s.placements.front();
    pc.test_case.traffic_class = s.traffic_classes.front();
    pc.test_case.per_qp_traffic_classes = s.per_qp_traffic_classes;
    out.push_back(std::move(pc));
  }
  return out;
}

std::int64_t StartGate::agree(std::int64_t proposed_ns) {
  std::unique_lock lock(mutex_);
  latest_ = std::max(latest_, proposed_ns);
  if (waiting_ > 0) --waiting_;
  changed_.notify_all();
  changed_.wait(lock, [this] { return waiting_ == 0; });
  return latest_;
}

void StartGate::leave() {
  const std::lock_guard lock(mutex_);
  if (waiting_ > 0) --waiting_;
  changed_.notify_all();
}

TrafficOutcome run_parts(const CaseContext& c,
                         const std::function<TrafficOutcome(const CaseContext&)>& run_one) {
  const std::vector<PartCase> cases = part_cases(*c.test, *c.test_case);
  StartGate gate(cases.size());
  std::vector<PartRun> runs(cases.size());
  std::mutex hooks;  // the case's hooks are called from every part's thread
  std::once_flag started;
  std::vector<std::thread> threads;
  for (std::size_t i = 0; i < cases.size(); ++i)
    threads.emplace_back([&, i] {
      const PartCase& pc = cases[i];
      CaseContext part = c;
      part.test = &pc.test;
      part.test_case = &pc.test_case;
      if (i != 0) part.on_progress = {};  // the first part's progress is the case's
      part.stagger_ns = nanoseconds(pc.part->stagger_s);
      part.before_first_packet = [&] {
        const std::lock_guard lock(hooks);
        if (c.before_first_packet) c.before_first_packet();
      };
      // What is timed from the case's start (its injection) starts once, at the agreed time;
      // each part's own start follows by its start_after_s.
      part.on_traffic_start = {};
      bool proposed = false;
      part.agree_start = [&, i](std::int64_t proposed_ns) {
        proposed = true;
        const std::int64_t agreed = gate.agree(proposed_ns);
        std::call_once(started, [&] {
          const std::lock_guard lock(hooks);
          if (c.on_traffic_start) c.on_traffic_start(agreed);
        });
        runs[i].start_ns = agreed + nanoseconds(cases[i].part->start_after_s);
        return *runs[i].start_ns;
      };
      try {
        runs[i].outcome = run_one(part);
      } catch (const PhaseFailure& f) {
        runs[i].outcome.failure = f.error;
      } catch (const std::exception& e) {
        runs[i].outcome.failure =
            reports::AttemptError{host_named_in(e.what()), "traffic", e.what()};
      }
      if (!proposed) gate.leave();
      runs[i].end_ns = wall_clock_ns();
    });
  for (std::thread& t : threads) t.join();
  return merged(cases, runs);
}

CaseShape parts_shape(const CaseContext& c,
                      const std::function<CaseShape(const CaseContext&)>& one) {
  const std::vector<PartCase> cases = part_cases(*c.test, *c.test_case);
  CaseShape out;
  double slowest = 0;
  for (const PartCase& pc : cases) {
    CaseContext part = c;
    part.test = &pc.test;
    part.test_case = &pc.test_case;
    const CaseShape shape = one(part);
    for (const std::string& h : shape.hosts)
      if (std::find(out.hosts.begin(), out.hosts.end(), h) == out.hosts.end())
        out.hosts.push_back(h);
    if (const auto link = shape.names.find("link_gbps"); link != shape.names.end())
      slowest = slowest == 0 ? link->second : std::min(slowest, link->second);
  }
  out.names = {{"hosts", static_cast<double>(out.hosts.size())}};
  if (slowest > 0) out.names["link_gbps"] = slowest;
  return out;
}

}  // namespace rocehil::run
