#include "runs/host_options.hpp"

#include "rocehil/remote/slurm.hpp"

namespace rocehil::cli {

void add_host_options(CLI::App* command, HostFlags& flags) {
  command->add_option("--hosts", flags.hosts,
                      "Only these inventory hosts (a selection expression, see 'inventory show "
                      "--help'); 'slurm' stands for the nodes of the Slurm allocation rocehil "
                      "runs in");
  command
      ->add_option("--launcher", flags.launcher,
                   "How agents start on every host, over the inventory's: ssh, local, or slurm "
                   "(a job step of the allocation rocehil runs in, on the node named as the "
                   "host; docs/slurm.md)")
      ->check(CLI::IsMember({"ssh", "local", "slurm"}));
}

void apply_host_flags(const HostFlags& flags, run::SuiteRunOptions& run) {
  run.hosts = remote::selection_with_slurm_nodes(flags.hosts);
  if (!flags.launcher.empty()) run.launcher = inventory::launcher_named(flags.launcher);
}

}  // namespace rocehil::cli
