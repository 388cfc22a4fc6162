#pragma once

#include <CLI/CLI.hpp>

namespace rocehil::cli {

// `rocehil calibrate`: rocehil's engine against perftest on one pair of hosts.
void add_calibrate_command(CLI::App& app, int& exit_code);

}  // namespace rocehil::cli
