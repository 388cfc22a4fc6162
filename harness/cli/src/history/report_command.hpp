#pragma once

#include <CLI/CLI.hpp>

namespace rocehil::cli {

// `rocehil report RUN_DIR`: report.html made again from a run directory's run.json.
void add_report_command(CLI::App& app, int& exit_code);

}  // namespace rocehil::cli
