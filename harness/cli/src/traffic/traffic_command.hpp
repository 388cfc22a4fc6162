#pragma once

#include <CLI/CLI.hpp>

namespace rocehil::cli {

// `rocehil traffic client|server`: one point-to-point test, perftest style, without a suite.
void add_traffic_command(CLI::App& app, int& exit_code);

}  // namespace rocehil::cli
