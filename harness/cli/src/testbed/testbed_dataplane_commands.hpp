#pragma once

#include <CLI/App.hpp>

namespace rocehil::cli {

// Adds the testbed's data-plane processes, which `testbed up --lossless` starts: `rocehil testbed
// switchd` in each leaf and spine (rocehil/testbed/switchd.hpp) and, with --vm, `rocehil testbed
// guest-nic` in each host (rocehil/testbed/guest_nic.hpp). Not for people: hidden from --help.
void add_dataplane_commands(CLI::App* testbed, int& exit_code);

}  // namespace rocehil::cli
