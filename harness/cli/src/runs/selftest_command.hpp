#pragma once

#include <CLI/CLI.hpp>

namespace rocehil::cli {

// `rocehil selftest --inventory FILE --hosts A,B`: the acceptance suite on two hosts.
void add_selftest_command(CLI::App& app, int& exit_code);

}  // namespace rocehil::cli
