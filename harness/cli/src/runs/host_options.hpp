#pragma once

// --hosts and --launcher: the same on every command that runs a suite (run, bisect).

#include <CLI/CLI.hpp>
#include <string>

#include "rocehil/run/suite_run.hpp"

namespace rocehil::cli {

struct HostFlags {
  std::string hosts;     // a selection; the term 'slurm' is the allocation's nodes
  std::string launcher;  // "", "ssh", "local" or "slurm"
};

void add_host_options(CLI::App* command, HostFlags& flags);

// Into the run's options, with 'slurm' in --hosts replaced by the allocation's nodes. Throws
// rocehil::Error (bad input) outside an allocation, saying how to get one.
void apply_host_flags(const HostFlags& flags, run::SuiteRunOptions& run);

}  // namespace rocehil::cli
