#pragma once

#include <CLI/App.hpp>

namespace rocehil::cli {

// Adds `rocehil testbed up|down|status`; when one runs, its exit code is stored in `exit_code`.
void add_testbed_command(CLI::App& app, int& exit_code);

}  // namespace rocehil::cli
