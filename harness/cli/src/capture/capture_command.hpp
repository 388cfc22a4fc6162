#pragma once

#include <CLI/App.hpp>

namespace rocehil::cli {

// Adds `rocehil capture` to `app`; when it runs, its exit code is stored in `exit_code`.
void add_capture_command(CLI::App& app, int& exit_code);

}  // namespace rocehil::cli
