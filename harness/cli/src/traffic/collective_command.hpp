#pragma once

#include <CLI/CLI.hpp>

namespace rocehil::cli {

// `rocehil traffic collective`: added under the `traffic` command.
void add_collective_command(CLI::App& traffic, int& exit_code);

}  // namespace rocehil::cli
