#pragma once

#include <CLI/CLI.hpp>

namespace rocehil::cli {

// `rocehil suite validate|cases`: check a suite file and list the test cases it expands to.
void add_suite_command(CLI::App& app, int& exit_code);

}  // namespace rocehil::cli
