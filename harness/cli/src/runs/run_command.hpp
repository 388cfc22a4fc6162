#pragma once

#include <CLI/CLI.hpp>

namespace rocehil::cli {

// `rocehil run SUITE --inventory FILE`: qualify a fabric against a suite.
void add_run_command(CLI::App& app, int& exit_code);

}  // namespace rocehil::cli
