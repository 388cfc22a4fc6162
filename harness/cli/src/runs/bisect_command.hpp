#pragma once

#include <CLI/CLI.hpp>

namespace rocehil::cli {

// `rocehil bisect`: the first bad candidate (setting, firmware) of an ordered list, by applying
// candidates with the user's command and running the suite on each, every step in the history.
void add_bisect_command(CLI::App& app, int& exit_code);

}  // namespace rocehil::cli
