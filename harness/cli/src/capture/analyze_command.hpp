#pragma once

#include <CLI/App.hpp>
#include <cstddef>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "rocehil/capture/analysis.hpp"
#include "rocehil/capture/file_analysis.hpp"

namespace rocehil::cli {

// How the analyzer judges pauses: a storm's threshold and which frames come from a spine. A
// command that analyses a live capture can add the same options, so it reads pauses as
// `rocehil analyze` reads the file it wrote.
struct PauseOptions {
  double storm_ms = 100.0;
  capture::MirrorDirection direction = capture::MirrorDirection::unknown;
  std::vector<capture::MacAddress> spine_macs;

  void apply_to(capture::AnalyzerOptions& options) const;
};

// Adds --storm-ms, --direction and --spine-mac (repeatable) to `cmd`, parsed into `options`
// (which must outlive the parse). A malformed value is a usage error naming the option.
void add_pause_options(CLI::App& cmd, PauseOptions& options);

// What --top means (shared by analyze and capture): in JSON, unset or 0 lists every flow; in
// tables, unset lists 10 and 0 lists every flow.
std::size_t json_flow_limit(std::optional<std::size_t> top) noexcept;
std::size_t text_flow_limit(std::optional<std::size_t> top) noexcept;

// Writes the analysis as JSON (schema_version 1) on stdout in pieces, with `extra` members at the
// top level (where the frames came from); `threads` format the flows (the command's --workers).
void print_analysis_json(const capture::Analysis& analysis, std::optional<std::size_t> top,
                         const nlohmann::json& extra, unsigned threads);

struct AnalyzeOptions {
  std::string file;
  bool json = false;
  std::optional<double> link_gbps;  // --link-gbps; unset: the file's if_speed, else 100
  std::uint32_t bin_ms = 10;
  std::optional<std::size_t> top;  // flows and QPs listed; unset: 10 in text, all in JSON
  bool progress = true;
  unsigned workers = 1;  // threads reading parts of the file
  std::uint64_t min_part_bytes = capture::FileAnalysisOptions{}.min_part_bytes;
  PauseOptions pause;
};

// Adds `rocehil analyze` to `app`; when it runs, its exit code is stored in `exit_code`.
void add_analyze_command(CLI::App& app, int& exit_code);

// Reads the capture, prints the report on stdout and returns the exit code: 0 when the file read
// to its end (or ended inside its last record), 2 when reading stopped at a corrupt record. The
// report is printed either way: results are never lost.
int run_analyze(const AnalyzeOptions& options);

}  // namespace rocehil::cli
