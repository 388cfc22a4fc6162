#pragma once

// --deploy[=package|binary] and --package: the same on every command that starts agents
// (inventory check, run, calibrate, selftest). What they do is preflight's (deploy.hpp).

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "rocehil/preflight/deploy.hpp"

namespace rocehil::cli {

struct DeployFlags {
  std::string mode;                   // "", "package" or "binary", as typed
  std::vector<std::string> packages;  // --package FILE.deb
};

struct DeployChoice {
  preflight::DeployMode mode = preflight::DeployMode::none;
  std::vector<preflight::DebPackage> packages;  // read from the files (package mode)
};

void add_deploy_options(CLI::App* command, DeployFlags& flags);

// The flags checked together and the packages read. Throws rocehil::Error (bad input) naming the
// flag and the fix.
DeployChoice resolve_deploy(const DeployFlags& flags);

// The flags as words of a command line that could be typed again (run.json).
std::vector<std::string> deploy_words(const DeployFlags& flags);

}  // namespace rocehil::cli
