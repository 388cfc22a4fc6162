#pragma once

#include <CLI/App.hpp>

namespace rocehil::cli {

// Adds `rocehil inventory validate|show|check|discover`; when one runs, its exit code is stored
// in `exit_code`.
void add_inventory_command(CLI::App& app, int& exit_code);

}  // namespace rocehil::cli
