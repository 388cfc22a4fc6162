#pragma once

#include <CLI/CLI.hpp>

namespace rocehil::cli {

// The commands that read the run history `rocehil run` records:
// `rocehil history`: the runs, newest first, with verdict counts and headline metrics.
void add_history_command(CLI::App& app, int& exit_code);
// `rocehil compare RUN_A RUN_B`: settings that differ, outcomes that changed, and each metric's
// change with a rank test over the repeats (compare_command.cpp).
void add_compare_command(CLI::App& app, int& exit_code);
// `rocehil trend --suite S`: each case's metrics over the suite's runs, their change points and
// what changed at each (trend_command.cpp).
void add_trend_command(CLI::App& app, int& exit_code);
// `rocehil export openmetrics RUN`: a run for a dashboard (export_command.cpp).
void add_export_command(CLI::App& app, int& exit_code);

}  // namespace rocehil::cli
