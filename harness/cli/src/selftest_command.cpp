// rocehil selftest: the acceptance suite on two hosts, read back as a checklist and one file to
// attach to a bug.
#include "selftest_command.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>

#include "interrupt.hpp"
#include "rocehil/common/error.hpp"
#include "rocehil/inventory/load.hpp"
#include "rocehil/remote/host_ssh.hpp"
#include "rocehil/run/selftest.hpp"
#include "rocehil/run/suite_run.hpp"
#include "run_printer.hpp"
#include "selftest_text.hpp"

namespace rocehil::cli {

namespace {

struct SelftestOptions {
  std::string inventory_file;
  std::string hosts;     // A,B
  std::string captures;  // P,Q
  std::string suite_file;
  std::string reports_dir = "reports";
  std::string history_file;
  bool deploy = false;
  bool json = false;
  int timeout_s = 30;
};

std::vector<std::string> split_commas(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream in(text);
  for (std::string word; std::getline(in, word, ',');)
    if (!word.empty()) out.push_back(word);
  return out;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw input_error(fmt::format("{}: cannot read the suite file", path));
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

run::SelftestSetup setup_from(const inventory::Inventory& inv, const SelftestOptions& o) {
  run::SelftestSetup setup;
  setup.hosts = split_commas(o.hosts);
  if (setup.hosts.size() != 2 || setup.hosts[0] == setup.hosts[1])
    throw input_error(fmt::format("--hosts '{}': give two different hosts of {}, as A,B", o.hosts,
                                  o.inventory_file));
  for (const auto& name : setup.hosts) {
    const inventory::Host* h = inv.find_host(name);
    if (h == nullptr)
      throw input_error(fmt::format("--hosts: {} has no host '{}' (rocehil inventory show {})",
                                    o.inventory_file, name, o.inventory_file));
    setup.providers.emplace_back(inventory::to_string(h->provider));
    setup.gpus.push_back(!h->nics.empty() && h->nics.front().gpu >= 0);
  }
  setup.captures = split_commas(o.captures);
  for (const auto& point : setup.captures)
    if (inv.find_capture(point) == nullptr)
      throw input_error(
          fmt::format("--captures: {} has no capture point '{}'", o.inventory_file, point));
  return setup;
}

nlohmann::json read_run(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) throw system_error(fmt::format("cannot read {}", path.string()), errno);
  return nlohmann::json::parse(in);
}

int selftest(const SelftestOptions& o) {
  const inventory::Inventory inv = inventory::load_inventory(o.inventory_file);
  const run::SelftestSetup setup = setup_from(inv, o);
  const std::string text = o.suite_file.empty() ? std::string(run::acceptance_suite_template())
                                                : read_file(o.suite_file);
  // The filled-in suite is kept beside the reports: `rocehil run` takes it again as it is.
  std::filesystem::create_directories(o.reports_dir);
  const auto suite_path = std::filesystem::path(o.reports_dir) /
                          fmt::format("acceptance-{}-{}.yaml", setup.hosts[0], setup.hosts[1]);
  const std::string suite = run::instantiate_acceptance_suite(text, setup.hosts, setup.captures);
  {
    std::ofstream out(suite_path);
    out << suite;
    if (!out) throw system_error(fmt::format("cannot write {}", suite_path.string()), errno);
  }

  run::SuiteRunOptions run;
  run.suite_file = suite_path.string();
  run.inventory_file = o.inventory_file;
  run.reports_dir = o.reports_dir;
  run.history_file = o.history_file;
  run.deploy = o.deploy;
  if (!run::pair_has_gpus(setup)) run.leave_out.push_back("gpu_memory");
  run.timeout = std::chrono::seconds(o.timeout_s);
  std::vector<std::string> words = {"rocehil", "selftest", "--inventory", o.inventory_file,
                                    "--hosts", o.hosts,    "--reports",   o.reports_dir};
  if (!o.captures.empty()) words.insert(words.end(), {"--captures", o.captures});
  if (!o.suite_file.empty()) words.insert(words.end(), {"--suite", o.suite_file});
  run.command_line = remote::remote_command_line(words);

  std::string run_id;
  RunPrinter printer(o.json ? RunPrinter::Stdout::quiet : RunPrinter::Stdout::text);
  const int run_code = run::run_suite(run, catch_interrupts(), printer, &run_id);
  if (run_id.empty()) return run_code;  // nothing was recorded to read back
  const auto directory = std::filesystem::path(o.reports_dir) / run_id;
  const nlohmann::json record = read_run(directory / "run.json");
  const run::SelftestReport report = run::evaluate_selftest(record, setup);
  const auto file = directory / "selftest.json";
  const std::string attached = run::selftest_json(report, setup, record).dump(2);
  {
    std::ofstream out(file);
    out << attached << "\n";
    if (!out) throw system_error(fmt::format("cannot write {}", file.string()), errno);
  }
  if (o.json)
    fmt::print("{}\n", attached);
  else
    fmt::print("{}", render_selftest_text(report, file.string()));
  // Interrupted: the run's own 3, whatever the checks that ran say.
  return record.value("interrupted", false) ? run_code : report.exit_code();
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
  cmd->add_flag("--deploy", o->deploy,
                "Copy this rocehil to hosts whose agent is missing or another version first");
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
Exit status: 0 every check that ran passed, 1 a check failed, 2 bad options or inventory,
3 a check could not be decided (host, agent, counter), or interrupted.)");
  cmd->callback([o, &exit_code] { exit_code = selftest(*o); });
}

}  // namespace rocehil::cli
