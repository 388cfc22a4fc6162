#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "rocehil/reports/run_record.hpp"

namespace rocehil::run {

// `rocehil run --drain-failed TAG`: after the run, the Slurm nodes its failures name are drained
// so the scheduler stops placing jobs on them. Only a node a failure names is drained: an ERROR
// that blames one host (an agent killed, a link down), or a failed case that ran on one host. A
// failed threshold of a case across several hosts (busbw on 8 ranks) names no node, and draining
// all of them would take good nodes out with the bad one; those are listed, not drained. A host
// the run could not use at all is drained too: unreachable or failed in the preflight, or its
// agent did not dial in (run.json's preflight.hosts and preflight.agents.missing).
struct DrainTarget {
  std::string node;
  std::string reason;  // "rocehil: TAG: CASE: WHAT"
};
struct DrainPlan {
  std::vector<DrainTarget> drain;        // each node once, with its first failure
  std::vector<std::string> not_drained;  // "CASE: why no node is named"
};
DrainPlan plan_drain(const reports::RunRecord& record, std::string_view tag);

struct DrainResult {
  DrainTarget target;
  bool drained = false;
  std::string detail;  // scontrol's complaint when it failed
};
// Runs `scontrol update NodeName=... State=DRAIN Reason=...` for each target (remote/slurm.hpp).
std::vector<DrainResult> drain_nodes(const std::vector<DrainTarget>& targets);

}  // namespace rocehil::run
