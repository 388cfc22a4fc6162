// rocehil calibrate: do rocehil's numbers agree with perftest's on the same pair, NICs and sizes?
#include "runs/calibrate_command.hpp"

#include <fmt/format.h>

#include <memory>

#include "rocehil/common/error.hpp"
#include "rocehil/remote/host_ssh.hpp"
#include "rocehil/run/calibrate.hpp"
#include "rocehil/suites/suite.hpp"
#include "runs/calibrate_text.hpp"
#include "runs/run_printer.hpp"
#include "shared/comma_list.hpp"
#include "shared/deploy_options.hpp"
#include "shared/interrupt.hpp"

namespace rocehil::cli {

namespace {

struct CalibrateCommandOptions {
  run::CalibrateOptions run;
  DeployFlags deploy;
  std::string hosts;  // A,B
  std::string sizes = "4K,64K,1M";
  std::string only;  // bw | lat; empty: both
  bool json = false;
  int timeout_s = 30;
};

std::vector<std::uint64_t> sizes_of(const std::string& text) {
  std::vector<std::uint64_t> out;
  for (const std::string& word : comma_list(text)) {
    const auto bytes = suites::parse_size(word);
    if (!bytes || *bytes == 0 || *bytes > (std::uint64_t{1} << 30))
      throw input_error(
          fmt::format("--sizes: '{}' is not a size from 1 byte to 1G such as "
                      "65536, 64K or 1M",
                      word));
    out.push_back(*bytes);
  }
  return out;
}

int calibrate(CalibrateCommandOptions& o) {
  run::CalibrateOptions& r = o.run;
  r.hosts = comma_list(o.hosts);
  r.sizes = sizes_of(o.sizes);
  r.bw = o.only.empty() || o.only == "bw";
  r.lat = o.only.empty() || o.only == "lat";
  r.timeout = std::chrono::seconds(o.timeout_s);
  const DeployChoice deploy = resolve_deploy(o.deploy);
  r.deploy = deploy.mode;
  r.deploy_packages = deploy.packages;
  std::vector<std::string> words = {
      "rocehil", "calibrate", "--inventory", r.inventory_file, "--hosts",
      o.hosts,   "--sizes",   o.sizes,       "--rounds",       std::to_string(r.rounds)};
  if (!o.only.empty()) words.insert(words.end(), {"--only", o.only});
  r.command_line = remote::remote_command_line(words);

  RunPrinter printer(o.json ? RunPrinter::Stdout::quiet : RunPrinter::Stdout::text);
  const run::CalibrateOutcome outcome = run::run_calibrate(r, catch_interrupts(), printer);
  if (o.json) {
    nlohmann::json rows = nlohmann::json::array();
    for (const auto& row : outcome.rows) {
      const auto opt = [](const std::optional<double>& v) {
        return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
      };
      rows.push_back({{"workload", row.workload},
                      {"size", row.size},
                      {"unit", row.unit},
                      {"rocehil", row.rocehil},
                      {"perftest", row.perftest},
                      {"rocehil_median", opt(row.rocehil_median)},
                      {"perftest_median", opt(row.perftest_median)},
                      {"ratio", opt(row.ratio)},
                      {"spread", opt(row.spread)},
                      {"outcome", row.outcome},
                      {"detail", row.detail}});
    }
    fmt::print("{}\n", nlohmann::json{{"schema_version", 1},
                                      {"run_id", outcome.run_id},
                                      {"suite_file", outcome.suite_file},
                                      {"hosts", r.hosts},
                                      {"rounds", r.rounds},
                                      {"bw_tolerance", r.bw_tolerance},
                                      {"lat_tolerance", r.lat_tolerance},
                                      {"exit_code", outcome.exit_code},
                                      {"rows", rows}}
                           .dump(2));
  } else if (!outcome.rows.empty()) {
    fmt::print("{}", render_calibration(r, outcome.rows));
  }
  return outcome.exit_code;
}

}  // namespace

void add_calibrate_command(CLI::App& app, int& exit_code) {
  auto o = std::make_shared<CalibrateCommandOptions>();
  CLI::App* cmd = app.add_subcommand(
      "calibrate",
      "Do rocehil's numbers agree with perftest's? Both engines back to back on one pair of "
      "hosts, the same NICs, sizes and QPs, rounds interleaved; per size the two results, their "
      "ratio and the spread of the rounds, graded.");
  cmd->add_option("--inventory,-i", o->run.inventory_file, "The inventory file (docs/inventory.md)")
      ->required();
  cmd->add_option("--hosts", o->hosts, "The two hosts, as CLIENT,SERVER")->required();
  cmd->add_option("--sizes", o->sizes, "bw message sizes, as 4K,64K,1M")->capture_default_str();
  cmd->add_option("--qps", o->run.qps, "bw: QPs per run")
      ->check(CLI::Range(1u, 256u))
      ->capture_default_str();
  cmd->add_option("--opcode", o->run.opcode, "bw: write, read or send (ib_write_bw, ...)")
      ->check(CLI::IsMember({"write", "read", "send"}))
      ->capture_default_str();
  cmd->add_option("--rounds", o->run.rounds, "Runs of each engine per size, interleaved")
      ->check(CLI::Range(1, 20))
      ->capture_default_str();
  cmd->add_option("--duration", o->run.seconds, "bw: seconds per run (whole seconds)")
      ->check(CLI::Range(1.0, 3600.0))
      ->capture_default_str();
  cmd->add_option("--lat-iterations", o->run.lat_iterations, "lat: ping-pongs per run")
      ->check(CLI::Range(std::uint64_t{5}, std::uint64_t{40000}))
      ->capture_default_str();
  cmd->add_option("--lat-size", o->run.lat_size, "lat: message size in bytes")
      ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{1} << 20))
      ->capture_default_str();
  cmd->add_option("--only", o->only, "bw or lat; default both")
      ->check(CLI::IsMember({"bw", "lat"}));
  cmd->add_option("--bw-tolerance", o->run.bw_tolerance,
                  "How far rocehil's bandwidth may be from perftest's, as a fraction")
      ->capture_default_str();
  cmd->add_option("--lat-tolerance", o->run.lat_tolerance,
                  "How far rocehil's median latency may be from perftest's t_typical")
      ->capture_default_str();
  cmd->add_option("--reports", o->run.reports_dir, "Where the run directory goes")
      ->capture_default_str();
  cmd->add_option("--history", o->run.history_file,
                  "The run history (SQLite; default <reports>/history.db)");
  add_deploy_options(cmd, o->deploy);
  cmd->add_option("--timeout", o->timeout_s, "Seconds a phase may wait for an agent")
      ->check(CLI::Range(1, 3600))
      ->capture_default_str();
  cmd->add_flag("--json", o->json, "Print the rows as JSON (schema_version 1)");
  cmd->footer(R"(
Examples:
  rocehil calibrate --inventory fabric.yaml --hosts gpu01,gpu02
  rocehil calibrate -i fabric.yaml --hosts gpu01,gpu02 --sizes 64K,4M --qps 4 --rounds 5

The first host is the client, the second the server, each on its first inventory NIC, the
NIC's provider for rocehil's runs (verbs on RDMA hosts) and Debian's perftest (ib_write_bw,
ib_send_lat) for the others. Both engines run with the same TX depth (64) and path MTU (1024).
The run is an ordinary run: reports/<run-id>/ holds run.json (every round of both engines),
junit.xml and report.html; the suite it ran is kept as reports/calibration-A-B.yaml.
README "Calibration against perftest" says how to read a disagreement.
Exit status: 0 every size agreed, 1 one did not, 2 bad options or inventory, 3 a run could not
be made (perftest cannot run without an RDMA device: it says why), or interrupted.)");
  cmd->callback([o, &exit_code] { exit_code = calibrate(*o); });
}

}  // namespace rocehil::cli
