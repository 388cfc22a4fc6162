#pragma once

#include <string>
#include <vector>

#include "rocehil/common/scheduling.hpp"
#include "rocehil/suites/grade.hpp"
#include "rocehil/suites/threshold.hpp"

namespace rocehil::suites {

// Whether a case's timing numbers may be the scheduler's rather than the fabric's: the agents
// (and the controller) measure what bent their own timing over the traffic (SchedulingReport),
// and this weighs it against what the case measured. Pure: numbers in, reasons out.
//
// An agent times latency and rate in user space; every millisecond its threads wait for a CPU
// lands in a ping-pong's round trip or in a gap in the posted work. So a case is starved when,
// on some host:
// - its latency (lat_p50_us; a collective's time_us) is within reach of the scheduling delay:
//   a thread sleeping 1 ms woke at p99 later than both starved_wake_floor_us and
//   starved_wake_share of that latency (an idle host wakes within tens of microseconds);
// - or the traffic lost a share of its time to the CPU: the thread that waited most waited for
//   a CPU (schedstat), or a hypervisor stole (steal), starved_stall_share or more of the window.
//   A busy-polling loop that waits 10% of its time loses about that much of its rate, and its
//   latency samples in that time: more than the spread of repeated runs on an idle host. (On
//   this 2-CPU machine, busy with builds, an unpinned agent waited 2-5% of a bw case; pinned
//   beside three busy loops, 47%.)
// PSI and the load average are recorded but not judged: they count every task on the host, and a
// host busy with work that never stood in the agent's way is not starved.
// The controller times nothing itself: it is judged only when it waited so long that its start
// and stop requests were late (starved_controller_stall_share, starved_controller_wake_us).
inline constexpr double starved_wake_floor_us = 200;
inline constexpr double starved_wake_share = 0.1;
inline constexpr double starved_stall_share = 0.1;
inline constexpr double starved_controller_stall_share = 0.2;
inline constexpr double starved_controller_wake_us = 10'000;

// Who measured: a host's name, or "controller".
struct SchedulingSeen {
  std::string who;
  SchedulingReport cpu;
  bool controller = false;
};

// One line a person reads per starved source: "h3: the agent woke 2.9 ms late at p99 (its
// latency p50 was 3.3 ms); run queue 7 on 2 CPUs". Empty: nothing bent the case's numbers that
// these measurements can tell.
std::vector<std::string> starvation_reasons(const std::vector<SchedulingSeen>& seen,
                                            const Values& measured);

// Which way CPU starvation pushes a metric: +1 up (latencies, times), -1 down (rates), 0 not at
// all (counts of frames, errors, drops).
int starvation_pushes(const std::string& metric);

// Takes a starved case's reasons into its grade (`thresholds` in the grade's order): they are kept
// in `starved`, which the console, junit.xml and report.html show beside the verdict. Starvation
// only raises latencies and lowers rates, so a threshold that passed still holds (the fabric did
// at least that well) and keeps its pass. One that failed the way starvation pushes keeps its
// verdict too, its detail saying the CPU may explain it: turned into an error it would stop a
// bisection and hide a nightly failure on a soft testbed, whose agents always share CPUs; the
// flag is there for the person reading it. No reasons: nothing changes.
void account_for_starvation(CaseGrade& grade, const std::vector<Threshold>& thresholds,
                            const std::vector<std::string>& reasons);

}  // namespace rocehil::suites
