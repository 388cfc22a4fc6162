#pragma once

#include <CLI/App.hpp>
#include <cstddef>
#include <optional>
#include <string>

namespace rocehil::harness {

struct AnalyzeOptions {
  std::string file;
  bool json = false;
  double link_gbps = 100.0;
  std::uint32_t bin_ms = 10;
  std::optional<std::size_t> top;  // flows and QPs listed; unset: 10 in text, all in JSON
  bool progress = true;
};

// Adds `rocehil analyze` to `app`; when it runs, its exit code is stored in `exit_code`.
void add_analyze_command(CLI::App& app, int& exit_code);

// Reads the capture, prints the report on stdout and returns the exit code: 0 when the file read
// to its end (or ended inside its last record), 2 when reading stopped at a corrupt record. The
// report is printed either way: results are never lost.
int run_analyze(const AnalyzeOptions& options);

}  // namespace rocehil::harness
