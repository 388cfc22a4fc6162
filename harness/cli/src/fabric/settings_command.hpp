#pragma once

#include <CLI/CLI.hpp>

namespace rocehil::cli {

// `rocehil settings list`: the fabric settings rocehil can set, where each lives, what it takes.
void add_settings_command(CLI::App& app, int& exit_code);

}  // namespace rocehil::cli
