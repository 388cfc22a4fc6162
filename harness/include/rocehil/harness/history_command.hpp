#pragma once

#include <CLI/CLI.hpp>

namespace rocehil::harness {

// `rocehil history`: the runs recorded in the run history, newest first.
void add_history_command(CLI::App& app, int& exit_code);

}  // namespace rocehil::harness
