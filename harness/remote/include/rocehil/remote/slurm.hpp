#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rocehil::remote {

// Slurm as a launcher: where sites forbid ssh to compute nodes outside a job, rocehil runs inside
// an allocation (salloc, sbatch) and starts each agent as a job step on its node, whose stdin and
// stdout carry the agent protocol as ssh's do. An inventory host's name is its Slurm node name.

// The allocation this process runs in, from the variables salloc and sbatch set.
struct SlurmAllocation {
  std::string job_id;    // SLURM_JOB_ID
  std::string nodelist;  // SLURM_JOB_NODELIST, a hostlist expression ("gpu[01-04]")
};
// nullopt outside an allocation (SLURM_JOB_ID unset or empty).
std::optional<SlurmAllocation> slurm_allocation();
// The allocation, or input_error saying that `what` needs one and how to get one.
SlurmAllocation require_slurm_allocation(std::string_view what);

// Expands a Slurm hostlist expression as Slurm does (`scontrol show hostnames`): comma-separated
// names, each with any number of bracketed lists of numbers and ranges, ranges keeping their
// zero padding: "gpu[01-03,7],rack[1-2]-n[1-2]" is gpu01 gpu02 gpu03 gpu7 rack1-n1 rack1-n2
// rack2-n1 rack2-n2. Throws input_error naming the expression and what is wrong in it.
std::vector<std::string> expand_hostlist(std::string_view expression);

// A --hosts selection whose top-level term `slurm` ("slurm", "slurm,cap") stands for the nodes
// of the allocation rocehil runs in: the term becomes their names, comma-separated, so a node the
// inventory does not list is refused by the selection as any other name would be. Throws
// input_error outside an allocation. Any other selection comes back as it was.
std::string selection_with_slurm_nodes(std::string_view selection);

// `srun` starting `remote_argv` (never through a shell) as one task of a new step of `job_id` on
// `node`, sharing the allocation with the other agents' steps, its output unbuffered.
std::vector<std::string> srun_argv(const std::string& job_id, const std::string& node,
                                   const std::vector<std::string>& remote_argv);

// `srun` starting `remote_argv` as one task on each of `nodes`, all in one step of `job_id`: how
// Slurm launches a run's dialing agents at once (its daemons fan the step out), with srun's stdin
// given to every task (--input=all: each agent reads the run's secret there).
std::vector<std::string> srun_step_on_nodes_argv(const std::string& job_id,
                                                 const std::vector<std::string>& nodes,
                                                 const std::vector<std::string>& remote_argv);

// `scontrol update NodeName=NODE State=DRAIN Reason=REASON`: one argv word per setting, so the
// reason needs no quoting; a reason longer than Slurm's display keeps its first 200 characters.
std::vector<std::string> scontrol_drain_argv(const std::string& node, std::string_view reason);

}  // namespace rocehil::remote
