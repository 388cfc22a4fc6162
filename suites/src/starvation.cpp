#include "rocehil/suites/starvation.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <string_view>

namespace rocehil::suites {
namespace {

std::string duration(double us) {
  if (us >= 1000) return fmt::format("{:.3g} ms", us / 1000);
  return fmt::format("{:.3g} us", us);
}

std::string percent(double share) {
  return fmt::format("{:.0f}%", share * 100);
}

// The latency the case measured that a wake-up's delay compares with, and its name.
struct Latency {
  double us = 0;
  std::string_view what;
};
std::optional<Latency> latency_of(const Values& measured) {
  if (const auto it = measured.find("lat_p50_us"); it != measured.end() && it->second > 0)
    return Latency{it->second, "latency p50"};
  if (const auto it = measured.find("perftest_t_typical_us");
      it != measured.end() && it->second > 0)
    return Latency{it->second, "perftest latency"};
  if (const auto it = measured.find("time_us"); it != measured.end() && it->second > 0)
    return Latency{it->second, "time per iteration"};
  return std::nullopt;
}

bool times_anything(const Values& measured) {
  return std::any_of(measured.begin(), measured.end(),
                     [](const auto& m) { return starvation_pushes(m.first) != 0; });
}

// The share of the window the traffic lost to the CPU, and what it was.
struct Stall {
  double share = 0;
  std::string what;
};
std::optional<Stall> stall_of(const SchedulingReport& cpu, bool controller) {
  std::optional<Stall> most;
  if (cpu.thread_wait_max_ms && cpu.seconds > 0) {
    const double share = *cpu.thread_wait_max_ms / 1000 / cpu.seconds;
    most = Stall{share, fmt::format("its busiest thread waited for a CPU {} of the traffic time",
                                    percent(share))};
    if (controller)
      most->what = fmt::format("it waited for a CPU {} of the traffic time", percent(share));
  }
  if (cpu.steal_share && (!most || *cpu.steal_share > most->share))
    most = Stall{*cpu.steal_share, fmt::format("the hypervisor stole {} of its CPUs' time",
                                               percent(*cpu.steal_share))};
  return most;
}

std::string run_queue(const SchedulingReport& cpu) {
  if (!cpu.run_queue_max || cpu.cpus == 0 || *cpu.run_queue_max <= cpu.cpus) return "";
  return fmt::format("; run queue {} on {} CPU{}", *cpu.run_queue_max, cpu.cpus,
                     cpu.cpus == 1 ? "" : "s");
}

}  // namespace

int starvation_pushes(const std::string& metric) {
  static constexpr std::array<std::string_view, 6> up = {"lat_p50_us", "lat_p99_us",  "lat_max_us",
                                                         "time_us",    "time_p99_us", "time_cv"};
  static constexpr std::array<std::string_view, 2> down = {"busbw_gbps", "algbw_gbps"};
  if (std::find(up.begin(), up.end(), metric) != up.end()) return 1;
  if (std::find(down.begin(), down.end(), metric) != down.end()) return -1;
  // perftest's own tables: latencies in us (t_min, t_typical, ...), rates in Gbit/s.
  if (metric.starts_with("perftest_t_")) return 1;
  if (metric.starts_with("perftest_bw_")) return -1;
  return 0;
}

std::vector<std::string> starvation_reasons(const std::vector<SchedulingSeen>& seen,
                                            const Values& measured) {
  std::vector<std::string> out;
  if (!times_anything(measured)) return out;
  const std::optional<Latency> latency = latency_of(measured);
  for (const SchedulingSeen& s : seen) {
    const SchedulingReport& cpu = s.cpu;
    std::vector<std::string> why;
    const double late = cpu.wake_late_p99_us;
    const std::string_view who = s.controller ? "the controller" : "the agent";
    if (s.controller) {
      if (late >= starved_controller_wake_us)
        why.push_back(
            fmt::format("the controller woke {} late at p99, so its requests to the "
                        "agents came late",
                        duration(late)));
    } else if (latency && cpu.wakeups > 0 && late >= starved_wake_floor_us &&
               late >= starved_wake_share * latency->us) {
      why.push_back(fmt::format("{} woke {} late at p99 (its {} was {})", who, duration(late),
                                latency->what, duration(latency->us)));
    }
    if (const auto stall = stall_of(cpu, s.controller);
        stall &&
        stall->share >= (s.controller ? starved_controller_stall_share : starved_stall_share))
      why.push_back(stall->what);
    if (why.empty()) continue;
    std::string line = s.who + ": " + why.front();
    for (std::size_t i = 1; i < why.size(); ++i) line += "; " + why[i];
    out.push_back(line + run_queue(cpu));
  }
  return out;
}

void account_for_starvation(CaseGrade& grade, const std::vector<Threshold>& thresholds,
                            const std::vector<std::string>& reasons) {
  if (reasons.empty()) return;
  grade.starved = reasons;
  std::string because = reasons.front();
  if (reasons.size() > 1) because += fmt::format(" (and {} more)", reasons.size() - 1);
  Verdict verdict = Verdict::pass;
  for (std::size_t i = 0; i < grade.results.size(); ++i) {
    Evaluation& e = grade.results[i].evaluation;
    if (i < thresholds.size() && e.verdict != Verdict::pass && e.verdict != Verdict::error) {
      const int pushes = starvation_pushes(thresholds[i].metric.name);
      const Comparison op = thresholds[i].op;
      const bool wants_low = op == Comparison::le || op == Comparison::lt;
      const bool wants_high = op == Comparison::ge || op == Comparison::gt;
      if ((pushes > 0 && wants_low) || (pushes < 0 && wants_high))
        e.detail += "; the case was CPU-starved, which may explain it (" + because + ")";
    }
    if (severity(e.verdict) > severity(verdict)) verdict = e.verdict;
  }
  grade.verdict = verdict;
}

}  // namespace rocehil::suites
