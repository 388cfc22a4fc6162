#include "rocehil/run/selftest_run.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "basics/read_file.hpp"
#include "rocehil/common/error.hpp"
#include "rocehil/common/whole_file.hpp"
#include "rocehil/inventory/load.hpp"
#include "rocehil/run/suite_run.hpp"

namespace rocehil::run {

namespace {

SelftestSetup setup_from(const inventory::Inventory& inv, const SelftestOptions& o) {
  SelftestSetup setup;
  setup.hosts = o.hosts;
  if (setup.hosts.size() != 2 || setup.hosts[0] == setup.hosts[1])
    throw input_error(fmt::format("--hosts '{}': give two different hosts of {}, as A,B",
                                  fmt::join(o.hosts, ","), o.inventory_file));
  for (const auto& name : setup.hosts) {
    const inventory::Host* h = inv.find_host(name);
    if (h == nullptr)
      throw input_error(fmt::format("--hosts: {} has no host '{}' (rocehil inventory show {})",
                                    o.inventory_file, name, o.inventory_file));
    setup.providers.emplace_back(inventory::to_string(h->provider));
    setup.gpus.push_back(!h->nics.empty() && h->nics.front().gpu >= 0);
  }
  setup.captures = o.captures;
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

}  // namespace

int SelftestOutcome::exit_code() const {
  return interrupted || !report ? run_exit_code : report->exit_code();
}

SelftestOutcome run_selftest(const SelftestOptions& o, const std::atomic<bool>& interrupt,
                             RunEvents& events) {
  const inventory::Inventory inv = inventory::load_inventory(o.inventory_file);
  const SelftestSetup setup = setup_from(inv, o);
  const std::string text = o.suite_file.empty() ? std::string(acceptance_suite_template())
                                                : read_file(o.suite_file, "suite file");
  // The filled-in suite is kept beside the reports: `rocehil run` takes it again as it is.
  std::filesystem::create_directories(o.reports_dir);
  const auto suite_path = std::filesystem::path(o.reports_dir) /
                          fmt::format("acceptance-{}-{}.yaml", setup.hosts[0], setup.hosts[1]);
  write_file_whole(suite_path.string(),
                   instantiate_acceptance_suite(text, setup.hosts, setup.captures));

  SuiteRunOptions run;
  run.suite_file = suite_path.string();
  run.inventory_file = o.inventory_file;
  run.reports_dir = o.reports_dir;
  run.history_file = o.history_file;
  run.deploy = o.deploy;
  run.deploy_packages = o.deploy_packages;
  for (const PairLimit& limit : tests_the_pair_cannot_take(setup))
    run.skip.push_back({limit.test, limit.reason});
  run.timeout = o.timeout;
  run.command_line = o.command_line;
  run.started_as = reports::RunKind::selftest;

  SelftestOutcome out;
  out.run_exit_code = run_suite(run, interrupt, events, &out.run_id);
  if (out.run_id.empty()) return out;  // nothing was recorded to read back
  const auto directory = std::filesystem::path(o.reports_dir) / out.run_id;
  const nlohmann::json record = read_run(directory / "run.json");
  out.interrupted = record.value("interrupted", false);
  out.report = evaluate_selftest(record, setup);
  out.file = (directory / "selftest.json").string();
  out.selftest_json = selftest_json(*out.report, setup, record).dump(2);
  write_file_whole(out.file, out.selftest_json + "\n");
  return out;
}

}  // namespace rocehil::run
