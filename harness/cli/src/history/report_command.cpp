// `rocehil report RUN_DIR`: report.html made again from run.json, e.g. after an upgrade or for
// a run directory copied from another machine.
#include "history/report_command.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>

#include "rocehil/common/error.hpp"
#include "rocehil/reports/html_report.hpp"
#include "rocehil/reports/run_directory.hpp"

namespace rocehil::cli {

namespace {

namespace fs = std::filesystem;

struct ReportOptions {
  std::string path;
  std::string output;
};

int make_report(const ReportOptions& o) {
  const fs::path json_path =
      fs::is_directory(o.path) ? fs::path(o.path) / "run.json" : fs::path(o.path);
  std::ifstream in(json_path);
  if (!in)
    throw input_error(fmt::format("{}: cannot read it (give a run directory or its run.json)",
                                  json_path.string()));
  nlohmann::json run;
  try {
    run = nlohmann::json::parse(in);
  } catch (const nlohmann::json::parse_error& e) {
    throw input_error(
        fmt::format("{}: not JSON at byte {}: {}", json_path.string(), e.byte, e.what()));
  }
  if (!run.is_object() || !run.contains("schema_version"))
    throw input_error(
        fmt::format("{}: not a run.json (it has no schema_version)", json_path.string()));
  const std::string html = reports::html_report(run);
  if (!o.output.empty()) {
    reports::write_file_whole(o.output, html);
    fmt::print("{}\n", o.output);
    return 0;
  }
  const fs::path target = json_path.parent_path() / "report.html";
  reports::write_file_whole(target.string(), html);
  fmt::print("{}\n", target.string());
  return 0;
}

}  // namespace

void add_report_command(CLI::App& app, int& exit_code) {
  auto o = std::make_shared<ReportOptions>();
  CLI::App* cmd = app.add_subcommand(
      "report", "Make report.html again from a run directory's run.json (rocehil run writes it).");
  cmd->add_option("RUN", o->path, "A run directory (reports/<run-id>) or its run.json")->required();
  cmd->add_option("-o,--output", o->output, "Write the page here instead of beside run.json");
  cmd->footer(R"(
Examples:
  rocehil report reports/20261122T010000Z-nightly
  rocehil report /mnt/ci/run.json -o /tmp/nightly.html
The page is one self-contained file: open it in any browser, attach it to a ticket, or serve it
as it is. Exit status: 0, 2 when the run.json cannot be read, 3 when the page cannot be
written.)");
  cmd->callback([o, &exit_code] { exit_code = make_report(*o); });
}

}  // namespace rocehil::cli
