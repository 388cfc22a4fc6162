#include "switches_command.hpp"

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <memory>

#include "rocehil/common/error.hpp"
#include "rocehil/inventory/load.hpp"
#include "rocehil/switches/poller.hpp"
#include "switches_text.hpp"

namespace rocehil::cli {

namespace {

struct SwitchesOptions {
  std::string inventory;
  std::vector<std::string> only;  // --switch
  bool json = false;
  bool all_ports = false;
  int deadline_ms = 15000;
};

switches::Poller poller_for(const SwitchesOptions& o) {
  const inventory::Inventory inv = inventory::load_inventory(o.inventory);
  auto targets = switches::targets_of(inv);
  if (!o.only.empty()) {
    std::vector<switches::Target> chosen;
    for (const auto& name : o.only) {
      const auto it = std::find_if(targets.begin(), targets.end(),
                                   [&](const switches::Target& t) { return t.name == name; });
      if (it == targets.end())
        throw input_error(
            fmt::format("--switch {}: {} has no switch of that name with snmp "
                        "settings; see 'rocehil inventory validate {} --json'",
                        name, o.inventory, o.inventory));
      chosen.push_back(*it);
    }
    targets = std::move(chosen);
  }
  if (targets.empty())
    throw input_error(
        fmt::format("{}: no switch has snmp settings; add 'snmp:' to the switches "
                    "or to defaults (docs/inventory.md)",
                    o.inventory));
  switches::PollerOptions options;
  options.deadline_ms = o.deadline_ms;
  return switches::Poller(std::move(targets), options);
}

template <typename Results>
int exit_code_of(const Results& results) {
  for (const auto& r : results)
    if (!r.answered()) return static_cast<int>(ExitCode::infrastructure);
  return 0;
}

int poll(const SwitchesOptions& o) {
  switches::Poller poller = poller_for(o);
  const auto snapshots = poller.counters();
  if (o.json)
    fmt::print("{}\n", snapshots_json(snapshots).dump(2));
  else
    fmt::print("{}", render_snapshots_text(snapshots, o.all_ports));
  return exit_code_of(snapshots);
}

int lldp(const SwitchesOptions& o) {
  switches::Poller poller = poller_for(o);
  const auto views = poller.lldp();
  if (o.json)
    fmt::print("{}\n", lldp_json(views).dump(2));
  else
    fmt::print("{}", render_lldp_text(views));
  return exit_code_of(views);
}

void add_common(CLI::App* c, SwitchesOptions& o) {
  c->add_option("-i,--inventory", o.inventory, "The inventory naming the switches and their snmp")
      ->required();
  c->add_option("--switch", o.only, "Only this switch (repeatable)");
  c->add_option("--deadline-ms", o.deadline_ms,
                "The whole poll ends by then; a switch still answering is reported as such")
      ->check(CLI::Range(100, 600000))
      ->capture_default_str();
  c->add_flag("--json", o.json, "Print JSON (schema_version 1)");
}

}  // namespace

void add_switches_command(CLI::App& app, int& exit_code) {
  CLI::App* sw = app.add_subcommand(
      "switches",
      "The switches' own view over SNMP, all switches at once: port counters (IF-MIB, PFC, "
      "queue drops) and LLDP neighbours");
  sw->require_subcommand(1);
  sw->footer(R"(
A switch is polled when the inventory gives it (or defaults) 'snmp:' settings: version 2c with a
community read from a file or an environment variable, or version 3 with a user, auth and priv
protocols and keys (docs/inventory.md). The secrets are never printed.
  rocehil switches poll -i fabric.yaml                  ports that carried traffic, every switch
  rocehil switches poll -i fabric.yaml --switch leaf01 --all --json
  rocehil switches lldp -i fabric.yaml                  who each port hears over LLDP
'rocehil inventory check' compares LLDP with the inventory's links; 'rocehil run' polls the
switches before and after each case.
Exit codes: 0 every switch answered, 2 bad inventory or option, 3 a switch did not answer (the
others are still shown).)");
  auto o = std::make_shared<SwitchesOptions>();
  CLI::App* p = sw->add_subcommand("poll", "Read every switch's port counters once, in parallel");
  add_common(p, *o);
  p->add_flag("--all", o->all_ports, "Show every port, also those that never carried a byte");
  p->footer(
      "\n'-' is a counter the switch does not serve (IF-MIB is everywhere; PFC frames come from\n"
      "CISCO-PFC-EXT-MIB, queue drops from CISCO-SWITCH-QOS-MIB, as SONiC serves them). It is\n"
      "never shown as 0.");
  p->callback([o, &exit_code] { exit_code = poll(*o); });
  CLI::App* l = sw->add_subcommand("lldp", "List every switch's LLDP neighbours (LLDP-MIB)");
  add_common(l, *o);
  l->callback([o, &exit_code] { exit_code = lldp(*o); });
}

}  // namespace rocehil::cli
