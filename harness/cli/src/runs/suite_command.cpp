// `rocehil suite validate|cases`: a suite file checked and expanded, before anything runs.
#include "runs/suite_command.hpp"

#include <fmt/format.h>

#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>

#include "rocehil/common/error.hpp"
#include "rocehil/inventory/load.hpp"
#include "rocehil/run/suite_check.hpp"
#include "rocehil/suites/suite.hpp"

namespace rocehil::cli {

namespace {

struct SuiteOptions {
  std::string file;
  std::string inventory_file;  // validate --inventory: held against it as `rocehil run` does
  bool json = false;
};

int validate(const SuiteOptions& o) {
  suites::SuiteLoadResult r = suites::parse_suite_file(o.file);
  if (!o.inventory_file.empty()) {
    // The suite as `rocehil run` will hold it against the inventory before it starts (hosts,
    // captures, injections, what each test's providers can measure), beside the file's own
    // problems: every one at once.
    const inventory::Inventory inventory = inventory::load_inventory(o.inventory_file);
    r.diagnostics = run::suite_problems(r, &inventory);
    if (!r.diagnostics.empty()) r.suite.reset();
  }
  if (!r.suite) {
    if (o.json) {
      nlohmann::ordered_json j{{"schema_version", 1}, {"file", o.file}, {"valid", false}};
      nlohmann::ordered_json errors = nlohmann::ordered_json::array();
      for (const auto& d : r.diagnostics)
        errors.push_back({{"line", d.line}, {"column", d.column}, {"message", d.message}});
      j["errors"] = std::move(errors);
      fmt::print("{}\n", j.dump(2));
      return static_cast<int>(ExitCode::bad_input);
    }
    std::string message;
    for (const auto& d : r.diagnostics) {
      if (!message.empty()) message += '\n';
      message += inventory::to_string(d);
    }
    throw input_error(message);
  }
  const auto cases = suites::expand(*r.suite);
  std::size_t thresholds = 0;
  for (const auto& t : r.suite->tests) thresholds += t.thresholds.size();
  if (o.json)
    fmt::print("{}\n", nlohmann::ordered_json{{"schema_version", 1},
                                              {"file", o.file},
                                              {"valid", true},
                                              {"name", r.suite->name},
                                              {"tests", r.suite->tests.size()},
                                              {"cases", cases.size()},
                                              {"thresholds", thresholds}}
                           .dump(2));
  else
    fmt::print("valid: suite '{}', {} tests, {} cases, {} thresholds\n", r.suite->name,
               r.suite->tests.size(), cases.size(), thresholds);
  return 0;
}

int list_cases(const SuiteOptions& o) {
  const suites::Suite suite = suites::load_suite(o.file);
  const auto cases = suites::expand(suite);
  if (o.json) {
    nlohmann::ordered_json list = nlohmann::ordered_json::array();
    for (const auto& c : cases) {
      const auto& t = suite.tests[c.test];
      list.push_back({{"id", c.id},
                      {"test", t.name},
                      {"workload", t.workload},
                      {"hosts", t.settings.hosts},
                      {"size", c.size},
                      {"qps", c.qps},
                      {"strategy", c.strategy},
                      {"placement", c.placement},
                      {"traffic_class", c.traffic_class},
                      {"expect", t.expect_fail ? "fail" : "pass"}});
      if (!c.per_qp_traffic_classes.empty())  // QP i of each connection: item i % n
        list.back()["traffic_class_per_qp"] = c.per_qp_traffic_classes;
    }
    fmt::print(
        "{}\n",
        nlohmann::ordered_json{{"schema_version", 1}, {"suite", suite.name}, {"cases", list}}.dump(
            2));
    return 0;
  }
  for (const auto& c : cases) {
    const auto& t = suite.tests[c.test];
    fmt::print("{:<40} {:<22} hosts {:<12} size {:>6} qps {:>3} {}{}\n", c.id, t.workload,
               t.settings.hosts, suites::size_label(c.size), c.qps, c.strategy,
               t.expect_fail ? "  (expected to fail)" : "");
  }
  return 0;
}

}  // namespace

void add_suite_command(CLI::App& app, int& exit_code) {
  CLI::App* suite = app.add_subcommand(
      "suite", "Check a suite file and list the test cases its sweeps expand to (docs/suites.md).");
  suite->require_subcommand(1);
  auto o = std::make_shared<SuiteOptions>();
  CLI::App* validate_cmd =
      suite->add_subcommand("validate", "Report every problem of a suite file, or summarize it");
  validate_cmd->add_option("suite", o->file, "The suite file")->required();
  validate_cmd->add_option("--inventory,-i", o->inventory_file,
                           "Also hold the suite against this inventory, as `rocehil run` does "
                           "before it starts: hosts, capture points, injections, and thresholds "
                           "on metrics the hosts' providers never measure");
  validate_cmd->add_flag("--json", o->json, "Print JSON (schema_version 1)");
  validate_cmd->footer(
      "\nExit status: 0 valid, 2 with every problem as FILE:LINE:COL: message.\n"
      "Example: rocehil suite validate suites/smoke.yaml");
  validate_cmd->callback([o, &exit_code] { exit_code = validate(*o); });
  CLI::App* cases_cmd =
      suite->add_subcommand("cases", "List the test cases, one per combination of swept values");
  cases_cmd->add_option("suite", o->file, "The suite file")->required();
  cases_cmd->add_flag("--json", o->json, "Print JSON (schema_version 1)");
  cases_cmd->callback([o, &exit_code] { exit_code = list_cases(*o); });
}

}  // namespace rocehil::cli
