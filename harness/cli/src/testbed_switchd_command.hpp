#pragma once

#include <CLI/App.hpp>

namespace rocehil::cli {

// Adds `rocehil testbed switchd`, the forwarding process `testbed up --lossless` starts in each
// leaf and spine (rocehil/testbed/switchd.hpp). Not for people: hidden from --help.
void add_switchd_command(CLI::App* testbed, int& exit_code);

}  // namespace rocehil::cli
