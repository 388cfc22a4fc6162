// `rocehil export openmetrics RUN`: a recorded run for a nightly dashboard.
#include <fmt/format.h>

#include <memory>

#include "history/history_command.hpp"
#include "history/history_file.hpp"
#include "rocehil/reports/openmetrics.hpp"
#include "rocehil/reports/run_directory.hpp"

namespace rocehil::cli {

namespace {

struct ExportOptions {
  std::string db = default_history;
  std::string run;
  std::string output;
};

int export_openmetrics(const ExportOptions& o) {
  const auto history = open_existing_history(o.db);
  const std::string text = reports::to_openmetrics(history.snapshot(o.run));
  if (o.output.empty())
    fmt::print("{}", text);
  else
    reports::write_file_whole(o.output, text);
  return 0;
}

}  // namespace

void add_export_command(CLI::App& app, int& exit_code) {
  CLI::App* cmd =
      app.add_subcommand("export", "Export a recorded run in another format for other tools.");
  cmd->require_subcommand(1);
  auto o = std::make_shared<ExportOptions>();
  CLI::App* om = cmd->add_subcommand(
      "openmetrics",
      "A run as OpenMetrics text (node_exporter's textfile collector reads it as it is).");
  om->add_option("RUN", o->run, "The run: an id from rocehil history, or its unique beginning")
      ->required();
  om->add_option("--db", o->db, "The run history (rocehil run's --history)")->capture_default_str();
  om->add_option("-o,--output", o->output,
                 "Write here (atomically) instead of standard output, e.g. "
                 "/var/lib/node_exporter/textfile/rocehil.prom");
  om->footer(R"help(
Examples:
  rocehil export openmetrics 20261122T010000Z-nightly
  rocehil export openmetrics "$(rocehil history --suite nightly --last 1 --json | jq -r '.runs[0].run_id')" \
      -o /var/lib/node_exporter/textfile/rocehil_nightly.prom
Families (all gauges, every sample labelled suite="..."): rocehil_run_exit_code,
rocehil_run_start_time_seconds, rocehil_run_cases{outcome}, rocehil_case_outcome{case,test,outcome},
rocehil_case_repeats{case,test}, and one rocehil_<metric>{case,test} per metric, the median of
the case's repeats (pfc_pause_fraction[3] becomes rocehil_pfc_pause_fraction{priority="3"}).
Exit status: 0, 2 when the history or the run is not found, 3 when the output cannot be
written.)help");
  om->callback([o, &exit_code] { exit_code = export_openmetrics(*o); });
}

}  // namespace rocehil::cli
