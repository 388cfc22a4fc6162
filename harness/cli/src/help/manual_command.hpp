#pragma once

#include <CLI/CLI.hpp>

namespace rocehil::cli {

// `rocehil man-page` and `rocehil completion bash`: hidden commands that print the manual page
// and the bash completion the package installs (the build runs them).
void add_manual_commands(CLI::App& app, int& exit_code);

}  // namespace rocehil::cli
