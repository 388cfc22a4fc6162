#pragma once

#include <CLI/App.hpp>

namespace rocehil::cli {

// Adds `rocehil testbed link LINK down|up --dir DIR` under `testbed`: a fabric link of a running
// testbed taken down or brought up at both ends, as a run's link events do (link_state.hpp).
void add_testbed_link_command(CLI::App* testbed, int& exit_code);

}  // namespace rocehil::cli
