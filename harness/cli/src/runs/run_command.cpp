#include "runs/run_command.hpp"

#include <memory>

#include <fmt/format.h>
#include "fabric/testbed_links.hpp"
#include "rocehil/remote/host_ssh.hpp"
#include "rocehil/run/suite_run.hpp"
#include "rocehil/settings/assignment.hpp"
#include "runs/host_options.hpp"
#include "runs/run_printer.hpp"
#include "shared/deploy_options.hpp"
#include "shared/interrupt.hpp"

namespace rocehil::cli {

namespace {

struct RunCliOptions {
  run::SuiteRunOptions run;
  DeployFlags deploy;
  int timeout_s = 30;
  bool json = false;
  HostFlags hosts;
  std::string drain_tag;         // --drain-failed; empty: no draining
  std::vector<std::string> set;  // --set KEY=VALUE
};

// The command as it could be typed again, for run.json.
std::string command_line(const run::SuiteRunOptions& o, const DeployFlags& deploy) {
  std::vector<std::string> words = {"rocehil",        "run",       o.suite_file, "--inventory",
                                    o.inventory_file, "--reports", o.reports_dir};
  if (!o.history_file.empty()) words.insert(words.end(), {"--history", o.history_file});
  if (!o.only.empty()) words.insert(words.end(), {"--only", o.only});
  if (!o.baseline.empty()) words.insert(words.end(), {"--baseline", o.baseline});
  if (!o.keep_captures.empty()) words.insert(words.end(), {"--keep-captures", o.keep_captures});
  if (!o.hosts.empty()) words.insert(words.end(), {"--hosts", o.hosts});
  if (o.launcher) words.insert(words.end(), {"--launcher", std::string(to_string(*o.launcher))});
  if (o.drain_tag) words.insert(words.end(), {"--drain-failed", *o.drain_tag});
  for (const auto& a : o.settings)
    words.insert(words.end(), {"--set", fmt::format("{}={}", a.setting->name, a.value)});
  for (const auto& w : deploy_words(deploy)) words.push_back(w);
  words.insert(words.end(), {"--timeout", std::to_string(o.timeout.count()), "--fanout",
                             std::to_string(o.fanout)});
  return remote::remote_command_line(words);
}

}  // namespace

void add_run_command(CLI::App& app, int& exit_code) {
  auto o = std::make_shared<RunCliOptions>();
  CLI::App* cmd = app.add_subcommand(
      "run",
      "Qualify a fabric: run a suite's tests (point-to-point, collectives, incast, injected "
      "faults) on the inventory's hosts over ssh, capture the mirror ports beside them, grade "
      "every case against the suite's thresholds and write reports/<run-id>/.");
  cmd->add_option("suite", o->run.suite_file, "The suite file (see docs/suites.md)")->required();
  cmd->add_option("--inventory,-i", o->run.inventory_file,
                  "The inventory file: hosts, NICs, capture points (see docs/inventory.md)")
      ->required();
  cmd->add_option("--reports", o->run.reports_dir,
                  "Where run directories go: <DIR>/<run-id>/run.json, junit.xml")
      ->capture_default_str();
  cmd->add_option("--history", o->run.history_file,
                  "The run history to record the run in (SQLite; default <reports>/history.db)");
  cmd->add_option("--only", o->run.only,
                  "Run only the cases whose id matches this glob: 'allreduce/*', 'p2p_*'");
  cmd->add_option("--fanout", o->run.fanout,
                  "Hosts contacted at once: preflight probes, agents starting (ssh sessions "
                  "opening)")
      ->check(CLI::Range(1, 4096))
      ->capture_default_str();
  cmd->add_option("--baseline", o->run.baseline,
                  "The run that thresholds naming baseline.<metric> compare with, read from the "
                  "history: 'last-qualified' (the newest full run of this suite that exited 0: "
                  "never a bisect step or an --only, --set or selftest run) or a run id (a "
                  "unique prefix; rocehil history lists them with their kind). Overrides the "
                  "suite's baseline:")
      ->type_name("RUN|last-qualified");
  cmd->add_option("--keep-captures", o->run.keep_captures,
                  "Keep the capture points' pcapng files in the run directory (captures/<case>/, "
                  "listed in run.json, linked from report.html): never, failed (the attempts that "
                  "did not pass) or always. Overrides the suite's capture: keep:")
      ->check(CLI::IsMember({"never", "failed", "always"}));
  add_host_options(cmd, o->hosts);
  cmd->add_option("--drain-failed", o->drain_tag,
                  "After the run, drain the Slurm nodes its failures name (scontrol update "
                  "State=DRAIN Reason=\"rocehil: TAG: CASE: what failed\"); never without this")
      ->type_name("TAG");
  add_deploy_options(cmd, o->deploy);
  cmd->add_option("--timeout", o->timeout_s,
                  "Seconds a phase may wait for an agent (setup, capture start) and traffic may "
                  "stay silent before the case is an ERROR naming the host")
      ->check(CLI::Range(1, 3600))
      ->capture_default_str();
  cmd->add_flag("--json", o->json,
                "Print run.json (schema_version 1) instead of the text; the files are written "
                "either way");
  cmd->add_option("--set", o->set,
                  "Set a fabric setting for this run, by name (rocehil settings list): on every "
                  "host the run uses (its NICs, or the soft provider's own), or the testbed's "
                  "switches; read back before the first case, put back after the last. "
                  "Repeatable; overrides the suite's settings:")
      ->type_name("KEY=VALUE");
  cmd->add_flag("--no-switches{false}", o->run.switches,
                "Do not poll the switches (those with snmp settings) before and after each case");
  cmd->footer(R"(
Examples:
  rocehil run suites/smoke.yaml --inventory /tmp/tb/inventory.yaml
  rocehil run nightly.yaml -i fabric.yaml --only 'allreduce/*' --reports /srv/rocehil/reports
  rocehil suite cases nightly.yaml        (what will run, before running it)
  rocehil run smoke.yaml -i fabric.yaml --set roce_np.min_time_between_cnps=8 --set roce_rp.rpg_gd=9

What happens: the suite is checked against the inventory (every problem at once, with its line);
every host it uses is preflighted over ssh; then each case runs: captures start, agents start on
its hosts, the workload runs (with the test's injection beside it), captures stop and are
analysed, the switches it crosses are read again over SNMP (they were read before it started:
switch_* metrics, the ports that dropped, errored or paused), the numbers are written to
run.json, then graded. A threshold with 'retry: N' runs a
failing case again up to N times. A host that fails a phase makes that case ERROR, naming the
host and the phase, and the run goes on. Ctrl-C stops agents and captures, writes what was
measured and exits 3.
Pacing: a bw test's 'rate:' (55% of the sender's link_gbps, or 400Mbit/s) is held by the NIC's
own limiter (a ConnectX's where verbs finds one, the soft NIC's per-QP pacer), else by the
engine's token bucket (perftest: its software limiter); a rate above the sender's link is refused with the suite's line. run.json's
traffic.pacing names the method and the rate each sender reached (docs/suites.md, "Pacing").
Settings (--set, the suite's settings:) are applied before the first case on every host the run
uses, each journaled on the host first and read back; a host without the setting, a write the
driver refuses or a read-back that differs stops the run before traffic, naming host and setting,
with whatever was changed put back. After the run, on an error and on Ctrl-C, every change is put
back and read back. A journal left by a controller that was killed is put back by the next run
(and by rocehil settings restore); a live run's is left alone. The settings are read back after
every attempt: one changed under the run makes that attempt an ERROR naming it. They are in
run.json ("settings": held, changed_under_run) and in compare.
A threshold such as 'busbw_gbps >= 0.95 * baseline.busbw_gbps' compares each case with the same
case of a baseline run (the median of its repeats): --baseline or the suite's 'baseline:' names
it; without one such a suite is refused before anything runs. run.json and report.html say which
run it was. Each run is recorded with its kind: full, only (--only), set (--set), bisect (a step
of rocehil bisect), selftest; 'last-qualified' and trends take full runs only.
A test marked 'expect: fail' injects a fault the harness must catch: its failure counts as a pass,
and a pass as a failure.
Captures are analysed on their hosts and not kept unless the suite's 'capture: {keep: failed}'
(or always) or --keep-captures says so: each capture point then writes its frames on its host
(the newest keep_mb, 64 by default), and once the attempt is graded they are copied into
reports/<run-id>/captures/<case>/ or deleted; keep_total_mb (4096) bounds the run's. Open them
with Wireshark or 'rocehil analyze'.
Exit status: 0 the fabric qualified, 1 a threshold failed, 2 bad suite, inventory or options,
3 a host, agent or capture failed (preflight included), or interrupted.)");
  cmd->callback([o, &exit_code] {
    o->run.timeout = std::chrono::seconds(o->timeout_s);
    apply_host_flags(o->hosts, o->run);
    if (!o->drain_tag.empty()) o->run.drain_tag = o->drain_tag;
    const DeployChoice deploy = resolve_deploy(o->deploy);
    o->run.deploy = deploy.mode;
    o->run.deploy_packages = deploy.packages;
    for (const auto& text : o->set) o->run.settings.push_back(settings::parse_assignment(text));
    o->run.settings = settings::merge({}, o->run.settings);
    o->run.fabric_links = testbed_links_for(o->run.inventory_file);
    o->run.command_line = command_line(o->run, o->deploy);
    RunPrinter printer(o->json ? RunPrinter::Stdout::json : RunPrinter::Stdout::text);
    exit_code = run::run_suite(o->run, catch_interrupts(), printer);
  });
}

}  // namespace rocehil::cli
