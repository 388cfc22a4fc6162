// rocehil selftest: the acceptance suite on two hosts, read back as a checklist and one file to
// attach to a bug.
#include "runs/selftest_command.hpp"

#include <fmt/format.h>

#include <memory>

#include "rocehil/common/error.hpp"
#include "rocehil/remote/host_ssh.hpp"
#include "rocehil/run/selftest_run.hpp"
#include "runs/run_printer.hpp"
#include "runs/selftest_text.hpp"
#include "shared/comma_list.hpp"
#include "shared/deploy_options.hpp"
#include "shared/interrupt.hpp"

namespace rocehil::cli {

namespace {

struct SelftestOptions {
  std::string inventory_file;
  std::string hosts;     // A,B
  std::string captures;  // P,Q
  std::string suite_file;
  std::string reports_dir = "reports";
  std::string history_file;
  DeployFlags deploy;
  bool json = false;
  int timeout_s = 30;
};

int selftest(const SelftestOptions& o) {
  run::SelftestOptions run;
  run.inventory_file = o.inventory_file;
  run.hosts = comma_list(o.hosts);
  run.captures = comma_list(o.captures);
  run.suite_file = o.suite_file;
  run.reports_dir = o.reports_dir;
  run.history_file = o.history_file;
  const DeployChoice deploy = resolve_deploy(o.deploy);
  run.deploy = deploy.mode;
  run.deploy_packages = deploy.packages;
  run.timeout = std::chrono::seconds(o.timeout_s);
  std::vector<std::string> words = {"rocehil", "selftest", "--inventory", o.inventory_file,
                                    "--hosts", o.hosts,    "--reports",   o.reports_dir};
  if (!o.captures.empty()) words.insert(words.end(), {"--captures", o.captures});
  if (!o.suite_file.empty()) words.insert(words.end(), {"--suite", o.suite_file});
  run.command_line = remote::remote_command_line(words);

  RunPrinter printer(o.json ? RunPrinter::Stdout::quiet : RunPrinter::Stdout::text);
  const run::SelftestOutcome outcome = run::run_selftest(run, catch_interrupts(), printer);
  if (outcome.report) {
    if (o.json)
      fmt::print("{}\n", outcome.selftest_json);
    else
      fmt::print("{}", render_selftest_text(*outcome.report, outcome.file));
  }
  return outcome.exit_code();
}

}  // namespace

void add_selftest_command(CLI::App& app, int& exit_code) {
  auto o = std::make_shared<SelftestOptions>();
  CLI::App* cmd = app.add_subcommand(
      "selftest",
      "Prove the path between two hosts in ten minutes: preflight, RDMA write, read and send and "
      "UD send with their data checked, latency, QP scaling over ECMP, ECN and CNPs, GPU memory; "
      "one verdict and one file to attach to a bug.");
  cmd->add_option("--inventory,-i", o->inventory_file, "The inventory file (docs/inventory.md)")
      ->required();
  cmd->add_option("--hosts", o->hosts, "The two hosts, as A,B")->required();
  cmd->add_option("--captures", o->captures,
                  "Capture points (mirror ports) on the pair's paths, as P,Q: the QP scaling "
                  "check then holds the source ports the mirrors saw to the pinned ones");
  cmd->add_option("--suite", o->suite_file,
                  "A suite to run instead of the built-in suites/acceptance.yaml: the same test "
                  "names, hosts '$HOSTS' and a list marked '# $CAPTURES'");
  cmd->add_option("--reports", o->reports_dir, "Where the run directory goes")
      ->capture_default_str();
  cmd->add_option("--history", o->history_file,
                  "The run history (SQLite; default <reports>/history.db)");
  add_deploy_options(cmd, o->deploy);
  cmd->add_option("--timeout", o->timeout_s, "Seconds a phase may wait for an agent")
      ->check(CLI::Range(1, 3600))
      ->capture_default_str();
  cmd->add_flag("--json", o->json, "Print selftest.json instead of the text");
  cmd->footer(R"(
Examples:
  rocehil selftest --inventory fabric.yaml --hosts gpu01,gpu02
  rocehil selftest -i fabric.yaml --hosts gpu01,gpu17 --captures spine1-mirror,spine2-mirror

The checks: preflight; rc_write, rc_read, rc_send, ud_send (bandwidth with every byte
compared); latency; qp_scaling (8 QPs with pinned UDP source ports, looked for on the mirrors
given with --captures); ecn_cnp (an incast, and the NICs' CNP counter); gpu_memory (the GPUs the
inventory pairs with the NICs; left out without them); calibration (perftest).
A check the hosts cannot take (the soft provider has no NIC counters, UD or GPU memory) or this
version does not run is SKIP with the reason, never a pass. The run is an ordinary run:
reports/<run-id>/ holds run.json, junit.xml, report.html and selftest.json, the file to attach
to a bug. README "First contact with real hardware" says what each failure usually means.
Fabric settings a killed run left changed on the hosts (their journals) are put back first, and
said, as every run does; a live run's are left alone (docs/settings.md).
Exit status: 0 every check that ran passed, 1 a check failed, 2 bad options or inventory,
3 a check could not be decided (host, agent, counter), or interrupted.)");
  cmd->callback([o, &exit_code] { exit_code = selftest(*o); });
}

}  // namespace rocehil::cli
