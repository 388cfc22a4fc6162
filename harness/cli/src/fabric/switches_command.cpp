#include "fabric/switches_command.hpp"

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <memory>

#include "fabric/switches_text.hpp"
#include "rocehil/common/error.hpp"
#include "rocehil/inventory/load.hpp"
#include "rocehil/switches/poller.hpp"
#include "rocehil/switches/port_admin.hpp"

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

struct PortOptions {
  std::string inventory;
  std::string switch_name;
  std::string port;
  std::string state;
  bool json = false;
};

int port(const PortOptions& o) {
  const inventory::Inventory inv = inventory::load_inventory(o.inventory);
  const inventory::Switch* s = inv.find_switch(o.switch_name);
  if (s == nullptr) {
    std::string names;
    for (const auto& sw : inv.switches) names += (names.empty() ? "" : ", ") + sw.name;
    throw input_error(fmt::format("switch '{}' is not in {}'s switches (its switches: {})",
                                  o.switch_name, o.inventory, names.empty() ? "none" : names));
  }
  const switches::PortAdminResult r = switches::set_port_admin_status(
      *s, o.port, o.state == "up" ? switches::AdminStatus::up : switches::AdminStatus::down);
  if (o.json)
    fmt::print("{}\n", port_admin_json(r).dump(2));
  else
    fmt::print("{}", render_port_admin_text(r));
  return 0;
}

void add_port_command(CLI::App* sw, int& exit_code) {
  auto o = std::make_shared<PortOptions>();
  CLI::App* c = sw->add_subcommand(
      "port", "Take one switch port down or up: SNMP SET of IF-MIB ifAdminStatus, read back");
  c->add_option("switch", o->switch_name, "The switch, as the inventory names it")->required();
  c->add_option("port", o->port, "The port, as the switch names it (its ifName, or ifDescr)")
      ->required();
  c->add_option("state", o->state, "down or up")->required()->check(CLI::IsMember({"down", "up"}));
  c->add_option("-i,--inventory", o->inventory, "The inventory naming the switch and its snmp")
      ->required();
  c->add_flag("--json", o->json, "Print JSON (schema_version 1)");
  c->footer(R"(
The switch's snmp settings need a write credential, read like the read community, never from
the inventory itself: for version 2c 'write_community_file: PATH' (or write_community_env), a
community the agent lets write ifAdminStatus; for version 3 'writable: true' (the same user and
keys, given write access on the agent). rocehil finds the port's ifIndex by walking ifName (then
ifDescr) with the read credentials, sets ifAdminStatus (1 up, 2 down) with the write ones, and
reads it back until it says what was set (for up to 2 s).
A SONiC switch, with a write community in the agent's snmpd.conf (rwcommunity NAME SOURCE
.1.3.6.1.2.1.2.2.1.7) and in a 0600 file here:
  snmp: {version: 2c, community_file: /etc/rocehil/ro, write_community_file: /etc/rocehil/rw}
  rocehil switches port leaf01 Ethernet0 down -i fabric.yaml
  rocehil switches port leaf01 Ethernet0 up -i fabric.yaml --json
Not every switch's agent implements SET of ifAdminStatus (it answers notWritable); give such a
switch link_down and link_up commands instead. This is the path a suite's link_down / link_up
events take on a switch that has no link_down command but a write credential
(docs/suites.md, "Events").
Exit codes: 0 set and read back, 2 bad inventory or option, an unknown port or a credential the
agent refuses to let write, 3 no answer or the agent did not apply it.)");
  c->callback([o, &exit_code] { exit_code = port(*o); });
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
      "queue drops) and LLDP neighbours; and one port taken down or up");
  sw->require_subcommand(1);
  sw->footer(R"(
A switch is polled when the inventory gives it (or defaults) 'snmp:' settings: version 2c with a
community read from a file or an environment variable, or version 3 with a user, auth and priv
protocols and keys (docs/inventory.md). The secrets are never printed.
  rocehil switches poll -i fabric.yaml                  ports that carried traffic, every switch
  rocehil switches poll -i fabric.yaml --switch leaf01 --all --json
  rocehil switches lldp -i fabric.yaml                  who each port hears over LLDP
  rocehil switches port leaf01 Ethernet0 down -i fabric.yaml   SNMP SET of ifAdminStatus
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
  add_port_command(sw, exit_code);
}

}  // namespace rocehil::cli
