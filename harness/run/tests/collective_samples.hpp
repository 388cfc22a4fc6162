#pragma once

// A measured collective case shared by the run's JSON tests and the command line's text tests.

#include "rocehil/run/collective_run.hpp"

namespace rocehil::run::samples {

// A ring allreduce of 3 ranks, 2 QPs each, with one wrong output, a straggler and retransmits.
inline CollectiveCase sample_case() {
  CollectiveCase c;
  c.job.plan = {.pattern = traffic::Pattern::ring_allreduce, .ranks = 3, .bytes = 1 << 20};
  c.job.scaling = {.qps = 2, .strategy = traffic::QpStrategy::split};
  c.job.iterations = 10;
  c.rank_names = {"h1", "h2", "h3"};
  c.verified = true;
  c.wrong = 1;
  c.problems = {"rank 2 (h3): output CRC-32 0x00000001, expected 0x00000002"};
  c.summary.iterations = 10;
  c.summary.time_us = 2000;
  c.summary.time_p50_us = 1900;
  c.summary.time_p99_us = 2500;
  c.summary.algbw_gbytes_s = 0.524288;
  c.summary.busbw_gbytes_s = 0.699051;
  c.summary.busbw_gbps = 5.592405;
  c.summary.wait_ms = {10, 0.5, 12};
  c.summary.straggler = 1;
  c.results.resize(3);
  for (auto& r : c.results) {
    r.workload = agent::Workload::collective;
    r.collective = agent::CollectiveReport{.iterations = 10, .wait_ns = {1000000, 2000000}};
    agent::fold_step_waits(*r.collective, false);  // as the agent sends it
    r.per_qp.resize(4);
  }
  c.results[0].per_qp[1].counters.retransmitted_packets = 7;
  return c;
}

}  // namespace rocehil::run::samples
