// `rocehil settings list`: the catalogue of settings (settings/catalogue.hpp), as a table or JSON.
#include "fabric/settings_command.hpp"

#include <fmt/format.h>

#include <memory>
#include <nlohmann/json.hpp>

#include "fabric/settings_text.hpp"
#include "fabric/testbed_links.hpp"
#include "rocehil/common/error.hpp"
#include "rocehil/inventory/load.hpp"
#include "rocehil/inventory/selection.hpp"
#include "rocehil/run/fabric_events.hpp"
#include "rocehil/run/fabric_settings.hpp"
#include "rocehil/settings/catalogue.hpp"
#include "shared/text_table.hpp"

namespace rocehil::cli {

namespace {

std::string where_text(const settings::Setting& s) {
  std::string out;
  if (!s.sysfs.empty()) out = fmt::format("sysfs {}", s.sysfs);
  if (!s.debugfs.empty())
    out += fmt::format("{}debugfs cc_params/{}", out.empty() ? "" : "; ", s.debugfs);
  if (!s.tool.empty() && s.sysfs.empty() && s.debugfs.empty()) out = std::string(s.tool);
  return out;
}

int list(bool json) {
  if (json) {
    nlohmann::ordered_json list = nlohmann::ordered_json::array();
    for (const settings::Setting& s : settings::catalogue())
      list.push_back({{"name", s.name},
                      {"scope", s.scope == settings::Scope::nic ? "nic" : "fabric_link"},
                      {"values", settings::valid_values(s)},
                      {"default", s.default_.empty() ? nlohmann::ordered_json(nullptr)
                                                     : nlohmann::ordered_json(s.default_)},
                      {"sysfs", s.sysfs.empty() ? nlohmann::ordered_json(nullptr)
                                                : nlohmann::ordered_json(s.sysfs)},
                      {"debugfs", s.debugfs.empty() ? nlohmann::ordered_json(nullptr)
                                                    : nlohmann::ordered_json(s.debugfs)},
                      {"tool", s.tool.empty() ? nlohmann::ordered_json(nullptr)
                                              : nlohmann::ordered_json(s.tool)},
                      {"soft", s.soft},
                      {"needs_root", s.needs_root},
                      {"what", s.what}});
    fmt::print("{}\n", nlohmann::ordered_json{{"schema_version", 1}, {"settings", list}}.dump(2));
    return 0;
  }
  TextTable table({{"setting", TextTable::Align::left},
                   {"values", TextTable::Align::left},
                   {"default", TextTable::Align::left},
                   {"soft", TextTable::Align::left},
                   {"where", TextTable::Align::left}});
  for (const settings::Setting& s : settings::catalogue())
    table.add_row({std::string(s.name), settings::valid_values(s),
                   s.default_.empty() ? "-" : std::string(s.default_),
                   s.scope == settings::Scope::nic ? (s.soft ? "yes" : "no") : "-", where_text(s)});
  fmt::print("{}", table.render());
  return 0;
}

struct HostCommandOptions {
  std::string inventory_file;
  std::string hosts;  // a selection; empty: every host
  int timeout_s = 30;
  bool json = false;
  bool force = false;              // restore: whatever run holds the journal
  std::vector<std::string> names;  // show: the settings to read; empty: every one
};

run::FabricSettings settings_on_hosts(const HostCommandOptions& o,
                                      const inventory::Inventory& inv) {
  std::vector<run::SettingsHost> hosts;
  if (o.hosts.empty()) {
    for (const inventory::Host& h : inv.hosts)
      hosts.push_back({&h, std::string(inventory::to_string(h.provider))});
  } else {
    for (const inventory::Host* h : inventory::select_hosts(inv, o.hosts))
      hosts.push_back({h, std::string(inventory::to_string(h->provider))});
  }
  return run::FabricSettings(std::move(hosts), run::fabric_id(inv),
                             testbed_links_for(o.inventory_file), nullptr,
                             std::chrono::seconds(o.timeout_s));
}

nlohmann::ordered_json changes_json(const std::vector<agent::SettingChange>& changes) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const agent::SettingChange& c : changes)
    out.push_back(
        {{"netdev", c.netdev}, {"name", c.name}, {"was", c.wanted}, {"put_back", c.before}});
  return out;
}

int restore(const HostCommandOptions& o) {
  const inventory::Inventory inv = inventory::load_inventory(o.inventory_file);
  // Links and NICs a killed run's events left down come up first (fabric_events.hpp), then the
  // settings are put back; both are told alike.
  run::FabricEvents downed(inv, run::fabric_id(inv), testbed_links_for(o.inventory_file), nullptr,
                           "settings restore");
  run::LeftJournals left = downed.restore_left(o.force);
  run::FabricSettings fabric = settings_on_hosts(o, inv);
  run::LeftJournals settings_left = fabric.restore_left({}, o.force);
  for (run::SettingsRestored& r : settings_left.restored) left.restored.push_back(std::move(r));
  for (run::JournalInUse& u : settings_left.in_use) left.in_use.push_back(std::move(u));
  // A live run's journal is not put back under it: refused (exit 3), each named, unless --force.
  const int code = left.in_use.empty() ? 0 : static_cast<int>(ExitCode::infrastructure);
  if (o.json) {
    nlohmann::ordered_json hosts = nlohmann::ordered_json::array();
    for (const run::SettingsRestored& r : left.restored)
      hosts.push_back(
          {{"host", r.host}, {"left_by", r.left_by}, {"changes", changes_json(r.changes)}});
    nlohmann::ordered_json in_use = nlohmann::ordered_json::array();
    for (const run::JournalInUse& u : left.in_use) in_use.push_back(in_use_json(u));
    fmt::print(
        "{}\n",
        nlohmann::ordered_json{{"schema_version", 1}, {"restored", hosts}, {"in_use", in_use}}.dump(
            2));
    return code;
  }
  for (const run::SettingsRestored& r : left.restored) fmt::print("{}\n", left_restored_line(r));
  for (const run::JournalInUse& u : left.in_use)
    fmt::print(stderr,
               "rocehil settings restore: {}; not put back under a live run (--force puts "
               "it back anyway, and that run's cases then read ERROR)\n",
               in_use_line(u));
  if (left.restored.empty() && left.in_use.empty())
    fmt::print("no journal was left on any host: nothing to put back\n");
  return code;
}

int show(const HostCommandOptions& o) {
  std::vector<std::string> names = o.names;
  for (const std::string& n : names)
    if (settings::find(n) == nullptr) {
      const std::string_view near = settings::nearest(n);
      throw input_error(near.empty()
                            ? fmt::format("unknown setting '{}' (rocehil settings list)", n)
                            : fmt::format("unknown setting '{}' (did you mean '{}'?)", n, near));
    }
  if (names.empty())
    for (const settings::Setting& s : settings::catalogue()) names.emplace_back(s.name);
  const inventory::Inventory inv = inventory::load_inventory(o.inventory_file);
  run::FabricSettings fabric = settings_on_hosts(o, inv);
  const std::vector<run::SettingInForce> values = fabric.read(names);
  if (o.json) {
    nlohmann::ordered_json list = nlohmann::ordered_json::array();
    for (const run::SettingInForce& v : values)
      list.push_back(
          {{"host", v.host}, {"netdev", v.netdev}, {"name", v.name}, {"value", v.value}});
    fmt::print("{}\n", nlohmann::ordered_json{{"schema_version", 1}, {"values", list}}.dump(2));
    return 0;
  }
  TextTable table({{"host", TextTable::Align::left},
                   {"netdev", TextTable::Align::left},
                   {"setting", TextTable::Align::left},
                   {"value", TextTable::Align::left}});
  for (const run::SettingInForce& v : values)
    table.add_row(
        {v.host.empty() ? "switches" : v.host, v.netdev.empty() ? "-" : v.netdev, v.name, v.value});
  fmt::print("{}", table.render());
  return 0;
}

void add_host_command_options(CLI::App* cmd, HostCommandOptions& o) {
  cmd->add_option("--inventory,-i", o.inventory_file, "The inventory file")->required();
  cmd->add_option("--hosts", o.hosts, "Only these hosts (a selection: h1,h2 or rack=r1)");
  cmd->add_option("--timeout", o.timeout_s, "Seconds each host's agent may take to answer")
      ->check(CLI::Range(1, 3600))
      ->capture_default_str();
  cmd->add_flag("--json", o.json, "Print JSON (schema_version 1)");
}

}  // namespace

void add_settings_command(CLI::App& app, int& exit_code) {
  CLI::App* settings_cmd = app.add_subcommand(
      "settings", "The fabric settings rocehil sets by name (docs/settings.md).");
  settings_cmd->require_subcommand(1);
  auto json = std::make_shared<bool>(false);
  CLI::App* list_cmd = settings_cmd->add_subcommand(
      "list", "Every setting: the values it takes, the firmware's default, where it is written");
  list_cmd->add_flag("--json", *json, "Print JSON (schema_version 1)");
  list_cmd->footer(
      "\nNIC settings are written through MLNX_OFED's sysfs (/sys/class/net/DEV/ecn/) or the\n"
      "upstream mlx5_ib driver's debugfs (/sys/kernel/debug/mlx5/PCI/cc_params/), as root; the\n"
      "soft provider takes the same names ('soft' yes). switch.* are the testbed's switches.\n"
      "Example: rocehil settings list --json | jq '.settings[].name'");
  list_cmd->callback([json, &exit_code] { exit_code = list(*json); });

  auto restore_options = std::make_shared<HostCommandOptions>();
  CLI::App* restore_cmd = settings_cmd->add_subcommand(
      "restore",
      "Put back the settings a run left changed (its controller killed): from each host's "
      "journal, read back");
  add_host_command_options(restore_cmd, *restore_options);
  restore_cmd->add_flag("--force", restore_options->force,
                        "Put back journals of runs that are alive (or cannot be told gone from "
                        "here) too; those runs then grade what they measure after it ERROR");
  restore_cmd->footer(
      "\nEvery host keeps a journal of what a run changed, written before each change\n"
      "(/run/rocehil/settings/FABRIC/HOST.json), with the run's controller process as its owner.\n"
      "A run puts its changes back itself; one whose controller was killed leaves the journal,\n"
      "and the next run, selftest or inventory check puts it back. This does it now. A journal\n"
      "whose run is still alive (judged by its pid, start time and boot id) is left alone.\n"
      "Needs root on the hosts (or passwordless sudo).\n"
      "Example: rocehil settings restore -i fabric.yaml\n"
      "Exit status: 0 done (or nothing to do), 2 bad input, 3 a host could not be put back or a\n"
      "journal is held by a live run (without --force).");
  restore_cmd->callback([restore_options, &exit_code] { exit_code = restore(*restore_options); });

  auto show_options = std::make_shared<HostCommandOptions>();
  CLI::App* show_cmd = settings_cmd->add_subcommand(
      "show", "The settings in force on the inventory's hosts (and a testbed's switches)");
  add_host_command_options(show_cmd, *show_options);
  show_cmd->add_option("names", show_options->names, "The settings to read; default: every one");
  show_cmd->footer(
      "\nRead through each host's agent as a run sets them: a NIC's sysfs or debugfs files, the\n"
      "soft provider's own; a setting a NIC does not have is not listed.\n"
      "Example: rocehil settings show -i fabric.yaml roce_rp.rpg_time_reset roce_np.enable");
  show_cmd->callback([show_options, &exit_code] { exit_code = show(*show_options); });
}

}  // namespace rocehil::cli
