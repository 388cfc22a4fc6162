#pragma once

#include <CLI/CLI.hpp>

namespace rocehil::cli {

// Every command of `rocehil`, added to `app` (the root): main runs it, and the man page and the
// shell completion are generated from it, so neither can drift from what the program takes.
// A command's callback stores its exit status in `exit_code`.
void add_commands(CLI::App& app, int& exit_code);

}  // namespace rocehil::cli
