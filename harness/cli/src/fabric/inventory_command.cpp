#include "fabric/inventory_command.hpp"
#include "rocehil/remote/slurm.hpp"
#include "rocehil/remote/this_executable.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>

#include "fabric/preflight_text.hpp"
#include "fabric/settings_text.hpp"
#include "fabric/switches_text.hpp"
#include "fabric/testbed_links.hpp"
#include "rocehil/common/error.hpp"
#include "rocehil/common/units.hpp"
#include "rocehil/inventory/json.hpp"
#include "rocehil/inventory/load.hpp"
#include "rocehil/inventory/selection.hpp"
#include "rocehil/preflight/inventory_check.hpp"
#include "rocehil/preflight/inventory_discover.hpp"
#include "rocehil/preflight/switch_check.hpp"
#include "rocehil/run/fabric_settings.hpp"
#include "rocehil/settings/journal.hpp"
#include "rocehil/switches/cabling.hpp"
#include "shared/deploy_options.hpp"
#include "shared/progress.hpp"
#include "shared/text_table.hpp"

namespace rocehil::cli {

namespace {

namespace inv = rocehil::inventory;

struct InventoryOptions {
  std::string file;
  std::string hosts = "all";
  bool json = false;
  DeployFlags deploy;
  std::size_t fanout = 32;
  double timeout_s = 60;
  std::vector<std::string> targets;
  remote::SshOptions ssh;
  bool no_switches = false;
  std::string links_from;  // discover --links-from INVENTORY
};

// 0 < 1 (a check failed) < 3 (something unreachable): the worse of two parts' exit codes.
int worse(int a, int b) {
  return std::max(a, b);
}

std::string summary(const inv::Inventory& inventory) {
  std::size_t nics = 0;
  for (const auto& h : inventory.hosts) nics += h.nics.size();
  return fmt::format("{}, {}, {}, {}, {}, {}", count_of(inventory.hosts.size(), "host"),
                     count_of(nics, "NIC"), count_of(inventory.racks.size(), "rack"),
                     count_of(inventory.switches.size(), "switch"),
                     count_of(inventory.links.size(), "link"),
                     count_of(inventory.captures.size(), "capture point"));
}

int validate(const InventoryOptions& o) {
  const inv::LoadResult result = inv::parse_inventory_file(o.file);
  if (o.json) {
    nlohmann::json j{
        {"schema_version", 1}, {"file", o.file}, {"valid", result.inventory.has_value()}};
    j["errors"] = nlohmann::json::array();
    for (const auto& d : result.diagnostics)
      j["errors"].push_back({{"line", d.line}, {"column", d.column}, {"message", d.message}});
    if (result.inventory) j["inventory"] = inv::to_json(*result.inventory);
    fmt::print("{}\n", j.dump(2));
  } else if (result.inventory) {
    fmt::print("{}: valid: {}\n", o.file, summary(*result.inventory));
  } else {
    for (const auto& d : result.diagnostics) fmt::print(stderr, "{}\n", inv::to_string(d));
    fmt::print(stderr, "{}: {} {}; nothing was run\n", o.file, result.diagnostics.size(),
               result.diagnostics.size() == 1 ? "error" : "errors");
  }
  return result.inventory ? 0 : static_cast<int>(ExitCode::bad_input);
}

std::string nic_name(const inv::Nic& nic) {
  if (nic.device.empty()) return nic.netdev;
  std::string s = fmt::format("{}/{}", nic.device, nic.port);
  return nic.netdev.empty() ? s : s + " " + nic.netdev;
}

int show(const InventoryOptions& o) {
  const inv::Inventory inventory = inv::load_inventory(o.file);
  const auto hosts = inv::select_hosts(inventory, remote::selection_with_slurm_nodes(o.hosts));
  if (o.json) {
    nlohmann::json j{{"schema_version", 1}, {"file", o.file}, {"selection", o.hosts}};
    j["hosts"] = nlohmann::json::array();
    for (const auto* h : hosts) j["hosts"].push_back(inv::to_json(*h));
    fmt::print("{}\n", j.dump(2));
    return 0;
  }
  TextTable table({{"HOST", TextTable::Align::left},
                   {"ADDRESS", TextTable::Align::left},
                   {"RACK", TextTable::Align::left},
                   {"LABELS", TextTable::Align::left},
                   {"PROVIDER", TextTable::Align::left},
                   {"NIC", TextTable::Align::left},
                   {"IP", TextTable::Align::left},
                   {"RAIL", TextTable::Align::right}});
  // One row per NIC; a host's own columns only on its first.
  for (const auto* h : hosts) {
    std::string labels;
    for (const auto& l : h->labels) {
      if (!labels.empty()) labels += ',';
      labels += l;
    }
    std::vector<std::string> row = {h->name, h->address, h->rack.empty() ? "-" : h->rack,
                                    labels.empty() ? "-" : labels,
                                    std::string(inv::to_string(h->provider))};
    if (h->nics.empty()) {
      row.insert(row.end(), {"-", "-", "-"});
      table.add_row(row);
    }
    for (const auto& n : h->nics) {
      row.insert(row.end(), {nic_name(n), n.ip.empty() ? "-" : n.ip, std::to_string(n.rail)});
      table.add_row(row);
      row.assign(5, "");
    }
  }
  fmt::print("{}{} of {} selected by '{}'\n", table.render(), hosts.size(),
             count_of(inventory.hosts.size(), "host"), o.hosts);
  return 0;
}

// The fabric settings of the hosts that answered: journals a killed run left put back (said),
// then the inventory's declared settings against the values in force. Returns the exit status
// its findings give (0, 1 a difference, 3 a host that could not be read or put back).
struct SettingsFindings {
  std::vector<run::SettingsRestored> restored;
  std::vector<run::JournalInUse> in_use;  // another run's, left alone: said, not an error
  std::vector<run::SettingDifference> differences;
  std::vector<std::string> errors;
  int code() const {
    if (!errors.empty()) return static_cast<int>(ExitCode::infrastructure);
    return differences.empty() ? 0 : static_cast<int>(ExitCode::threshold_failed);
  }
};

SettingsFindings check_settings(const InventoryOptions& o, const inv::Inventory& inventory,
                                const preflight::CheckReport& report) {
  SettingsFindings out;
  std::vector<run::SettingsHost> hosts;
  std::vector<std::string> declared;
  for (const auto& h : report.hosts) {
    if (h.verdict == preflight::HostVerdict::unreachable) continue;
    // Settings are read through the agent: not where it is missing or another version (the
    // agent check says so, with --deploy as the fix).
    if (std::any_of(h.items.begin(), h.items.end(), [](const preflight::CheckItem& i) {
          return i.name == "agent" && i.status == preflight::CheckStatus::fail;
        }))
      continue;
    const inv::Host* host = inventory.find_host(h.host);
    if (host == nullptr) continue;
    hosts.push_back({host, std::string(inv::to_string(host->provider))});
    for (const auto& a : host->settings)
      if (std::find(declared.begin(), declared.end(), a.setting->name) == declared.end())
        declared.emplace_back(a.setting->name);
  }
  const std::string fabric_id = run::fabric_id(inventory);
  try {
    run::FabricSettings fabric(hosts, fabric_id, testbed_links_for(o.file), nullptr,
                               std::chrono::seconds(std::max(5, static_cast<int>(o.timeout_s))), "",
                               o.fanout);
    // A journal a live run holds is left alone: a check must not undo a running run's settings.
    run::LeftJournals left = fabric.restore_left([&report, &fabric_id](const inv::Host& h) {
      for (const auto& c : report.hosts)
        if (c.host == h.name && c.facts)
          for (const std::string& j : c.facts->settings_journals)
            if (settings::is_journal_of(j, h.name, fabric_id)) return true;
      return false;
    });
    out.restored = std::move(left.restored);
    out.in_use = std::move(left.in_use);
    if (declared.empty()) return out;
    out.differences = run::declared_differences(hosts, fabric.read(declared));
  } catch (const Error& e) {
    // Without root no run of this user's can have left a journal; say it only when the
    // inventory declares settings to compare (which need the same access).
    if (e.exit_code() != ExitCode::bad_input || !declared.empty()) out.errors.push_back(e.what());
  }
  return out;
}

nlohmann::json to_json(const SettingsFindings& f) {
  nlohmann::json restored = nlohmann::json::array();
  for (const auto& r : f.restored) {
    nlohmann::json changes = nlohmann::json::array();
    for (const auto& c : r.changes)
      changes.push_back(
          {{"netdev", c.netdev}, {"name", c.name}, {"was", c.wanted}, {"put_back", c.before}});
    restored.push_back({{"host", r.host}, {"left_by", r.left_by}, {"changes", changes}});
  }
  nlohmann::json in_use = nlohmann::json::array();
  for (const auto& u : f.in_use) in_use.push_back(nlohmann::json(in_use_json(u)));
  nlohmann::json differences = nlohmann::json::array();
  for (const auto& d : f.differences)
    differences.push_back({{"host", d.host},
                           {"netdev", d.netdev},
                           {"name", d.name},
                           {"declared", d.declared},
                           {"origin", d.origin},
                           {"in_force", d.in_force ? nlohmann::json(*d.in_force) : nullptr}});
  return {{"restored", restored},
          {"in_use", in_use},
          {"differences", differences},
          {"errors", f.errors}};
}

std::string render_settings_text(const SettingsFindings& f) {
  std::string out;
  for (const auto& r : f.restored) out += left_restored_line(r) + "\n";
  for (const auto& u : f.in_use) out += in_use_line(u) + "\n";
  for (const auto& d : f.differences)
    out +=
        fmt::format("settings: {} {}: declared {} ({}), {}\n",
                    d.host.empty() ? "switches" : d.host + (d.netdev.empty() ? "" : " " + d.netdev),
                    d.name, d.declared, d.origin,
                    d.in_force ? "in force " + *d.in_force : std::string("not on its NICs"));
  for (const auto& e : f.errors) out += fmt::format("settings: {}\n", e);
  return out;
}

int check(const InventoryOptions& o) {
  const inv::Inventory inventory = inv::load_inventory(o.file);
  const auto hosts = inv::select_hosts(inventory, remote::selection_with_slurm_nodes(o.hosts));
  preflight::CheckOptions options;
  options.fanout = o.fanout;
  options.timeout = std::chrono::milliseconds(static_cast<std::int64_t>(o.timeout_s * 1000));
  options.controller_version = std::string("rocehil ") + ROCEHIL_VERSION;
  const DeployChoice deploy = resolve_deploy(o.deploy);
  options.deploy = deploy.mode;
  options.packages = deploy.packages;
  if (deploy.mode == preflight::DeployMode::binary)
    options.local_binary = remote::this_executable();
  Progress progress("check", "hosts", hosts.size());
  progress.set_enabled(!o.json || isatty(STDERR_FILENO));
  options.on_progress = [&progress](std::size_t done, std::size_t) { progress.update(done); };
  const preflight::CheckReport report = preflight::check_hosts(inventory, hosts, o.hosts, options);
  progress.finish();
  // The switches' part: their SNMP agents, the ports links name, and LLDP against links.
  std::optional<preflight::SwitchCheckReport> switch_report;
  if (!o.no_switches) switch_report = preflight::check_switches(inventory);
  const SettingsFindings settings = check_settings(o, inventory, report);
  if (o.json) {
    nlohmann::json j = to_json(report);
    if (switch_report) j["switches"] = preflight::to_json(*switch_report);
    j["settings"] = to_json(settings);
    fmt::print("{}\n", j.dump(2));
  } else {
    fmt::print("{}", render_check_text(report));
    if (switch_report) fmt::print("\n{}", render_switch_check_text(*switch_report));
    if (const std::string text = render_settings_text(settings); !text.empty())
      fmt::print("\n{}", text);
  }
  int code = worse(preflight::check_exit_code(report), settings.code());
  if (switch_report) code = worse(code, preflight::check_exit_code(*switch_report));
  return code;
}

// `discover --links-from INVENTORY`: the inventory's `links` as its switches' LLDP sees them.
int discover_links(const InventoryOptions& o) {
  const inv::Inventory inventory = inv::load_inventory(o.links_from);
  auto targets = switches::targets_of(inventory);
  if (targets.empty())
    throw input_error(
        fmt::format("--links-from {}: no switch has snmp settings; add 'snmp:' to "
                    "the switches or to defaults",
                    o.links_from));
  switches::Poller poller(std::move(targets));
  const auto views = poller.lldp();
  bool all = true;
  for (const auto& v : views)
    if (!v.answered()) {
      all = false;
      fmt::print(stderr, "rocehil: switch {}: {}\n", v.switch_name, v.error);
    }
  const auto links = switches::links_from_lldp(views);
  if (o.json) {
    nlohmann::json j{{"schema_version", 1}, {"links", nlohmann::json::array()}};
    for (const auto& l : links)
      j["links"].push_back(
          {{"name", l.name}, {"a", l.a.node + ":" + l.a.port}, {"b", l.b.node + ":" + l.b.port}});
    fmt::print("{}\n", j.dump(2));
  } else {
    fmt::print(
        "# links as the switches' LLDP sees them ({} cables); add each link's gbps\nlinks:\n",
        links.size());
    for (const auto& l : links)
      fmt::print("  - {{name: {}, a: \"{}:{}\", b: \"{}:{}\"}}\n", l.name, l.a.node, l.a.port,
                 l.b.node, l.b.port);
  }
  return all ? 0 : static_cast<int>(ExitCode::infrastructure);
}

int discover(const InventoryOptions& o) {
  if (!o.links_from.empty()) {
    if (!o.targets.empty())
      throw input_error("discover: give hosts to probe or --links-from, not both");
    return discover_links(o);
  }
  if (o.targets.empty())
    throw input_error("discover: name the hosts to probe, or give --links-from INVENTORY");
  preflight::DiscoverOptions options;
  options.ssh = o.ssh;
  options.fanout = o.fanout;
  options.timeout = std::chrono::milliseconds(static_cast<std::int64_t>(o.timeout_s * 1000));
  const auto hosts = preflight::discover_hosts(o.targets, options);
  bool all = true;
  for (const auto& h : hosts) {
    all = all && h.reachable;
    if (!h.reachable) fmt::print(stderr, "rocehil: {}: not reachable: {}\n", h.target, h.reason);
  }
  if (o.json) {
    nlohmann::json j{{"schema_version", 1}, {"hosts", nlohmann::json::array()}};
    for (const auto& h : hosts) {
      nlohmann::json e{{"target", h.target}, {"reachable", h.reachable}};
      if (h.reachable) {
        e["management_ip"] = h.management_ip;
        e["netdevs"] = h.netdevs;
        e["facts"] = to_json(h.facts);
      } else {
        e["reason"] = h.reason;
      }
      j["hosts"].push_back(std::move(e));
    }
    fmt::print("{}\n", j.dump(2));
  } else {
    fmt::print("{}", preflight::inventory_skeleton(hosts, o.ssh));
  }
  return all ? 0 : static_cast<int>(ExitCode::infrastructure);
}

void add_ssh_options(CLI::App* cmd, InventoryOptions& o) {
  cmd->add_option("--ssh-config", o.ssh.config_file, "ssh -F: an ssh client config file");
  cmd->add_option("--ssh-user", o.ssh.user, "ssh -l: the remote user");
  cmd->add_option("--ssh-port", o.ssh.port, "ssh -p: the remote sshd port")
      ->check(CLI::Range(1, 65535));
  cmd->add_option("--identity", o.ssh.identity, "ssh -i: the private key");
}

void add_fanout(CLI::App* cmd, InventoryOptions& o) {
  cmd->add_option("--fanout", o.fanout, "Hosts probed at once (ssh connections in flight)")
      ->check(CLI::Range(1, 1024))
      ->capture_default_str();
  cmd->add_option("--timeout", o.timeout_s, "Seconds each ssh command may take, connect included")
      ->check(CLI::Range(1.0, 3600.0))
      ->capture_default_str();
}

}  // namespace

void add_inventory_command(CLI::App& app, int& exit_code) {
  CLI::App* inventory = app.add_subcommand(
      "inventory",
      "The fabric's description (YAML): check it before a long run. validate finds every mistake "
      "in the file, check probes the hosts over ssh, discover writes a skeleton from hosts.");
  inventory->require_subcommand(1);
  inventory->footer(R"(
  rocehil inventory validate fabric.yaml                 every error, as FILE:LINE:COL
  rocehil inventory show fabric.yaml --hosts 'rack:r1@2,label:gpu@1/rack'
  rocehil inventory check fabric.yaml --hosts 'gpu[001-064]' --json > preflight.json
  rocehil inventory discover gpu001 gpu002 --ssh-user root > fabric.yaml

The format, host selection expressions and every check are described in docs/inventory.md.)");
  auto o = std::make_shared<InventoryOptions>();

  CLI::App* v = inventory->add_subcommand(
      "validate", "Check an inventory file; print every error as FILE:LINE:COL: what; fix");
  v->add_option("FILE", o->file, "The inventory (YAML)")->required();
  v->add_flag("--json", o->json,
              "Print JSON (schema_version 1): errors, or the expanded inventory");
  v->footer("\nExit codes: 0 valid, 2 errors found (all of them are printed, on stderr).");
  v->callback([o, &exit_code] { exit_code = validate(*o); });

  CLI::App* s = inventory->add_subcommand("show", "List the hosts a selection expression picks");
  s->add_option("FILE", o->file, "The inventory (YAML)")->required();
  s->add_option(
       "--hosts", o->hosts,
       "Selection expression; the term slurm: the nodes of the Slurm allocation it runs in")
      ->capture_default_str();
  s->add_flag("--json", o->json, "Print JSON (schema_version 1)");
  s->footer(R"(
Selection: TERM[,TERM...] (union); TERM is ATOM[&ATOM...] (intersection) with an optional @N
(first N) or @N/rack (first N of every rack); ATOM is [!]all, a name glob or range
(gpu0*, gpu[001-016]), or name:, label:, rack:, rail:, leaf:, provider: followed by a value.
  --hosts 'rack:r1@8'            packed: 8 hosts from one rack
  --hosts 'label:gpu@1/rack'     fragmented: one host from every rack)");
  s->callback([o, &exit_code] { exit_code = show(*o); });

  CLI::App* c = inventory->add_subcommand(
      "check",
      "Preflight the hosts over ssh, in parallel: reachability, agent version, RDMA ports and "
      "GIDs, MTU, PFC/ECN settings, firmware, GPU-NIC affinity");
  c->add_option("FILE", o->file, "The inventory (YAML)")->required();
  c->add_option("--hosts", o->hosts, "Selection expression (see 'inventory show --help')")
      ->capture_default_str();
  c->add_flag("--json", o->json,
              "Print JSON (schema_version 1): the preflight snapshot runs attach to results");
  add_deploy_options(c, o->deploy);
  add_fanout(c, *o);
  c->add_flag("--no-switches", o->no_switches,
              "Skip the switches (SNMP agents, the ports links name, LLDP cabling against links)");
  c->footer(
      "\nHosts without an RDMA device are 'soft only' (fine for the soft provider; a failure\n"
      "when the inventory asks for verbs).\n"
      "\n--deploy reports per host what it did ('deploy' item): installed (with the versions\n"
      "before and apt-get's summary), copied, or nothing to do. Hosts sharing one dpkg\n"
      "database install in turn. The package puts the agent at /usr/bin/rocehil: point the\n"
      "inventory's 'agent' there.\n"
      "  rocehil inventory check fabric.yaml --deploy --package rocehil_0.1.0_amd64.deb\n"
      "  rocehil inventory check fabric.yaml --hosts cap --deploy \\\n"
      "      --package rocehil_0.1.0_amd64.deb --package rocehil-dpdk_0.1.0_amd64.deb\n"
      "  rocehil inventory check fabric.yaml --deploy=binary     (hosts without apt)\n"
      "\nSwitches with 'snmp:' settings are checked too, all at once: their agent answers, every\n"
      "port the links name exists (ifName, ifDescr or ifAlias), and LLDP hears on each port\n"
      "the neighbour the links say; a swapped, missing or extra cable is named with both ends.\n"
      "Fabric settings: a journal a killed run left on a host is put back first (and said);\n"
      "then every setting the inventory declares (settings: under defaults or a host) is read\n"
      "on each host that answered, and each NIC where it differs is listed (exit 1).\n"
      "Exit codes: 0 every host ok or soft only, 1 a check failed, 2 bad inventory or\n"
      "selection, 3 a host or switch unreachable (the others are still checked).");
  c->callback([o, &exit_code] { exit_code = check(*o); });

  CLI::App* d = inventory->add_subcommand(
      "discover", "Probe hosts over ssh and print an inventory skeleton to complete by hand");
  d->add_option("HOST", o->targets, "Hosts to probe (names or addresses ssh can reach)");
  d->add_option("--links-from", o->links_from,
                "Print 'links:' for this inventory from its switches' LLDP neighbours (SNMP) "
                "instead of probing hosts");
  add_ssh_options(d, *o);
  add_fanout(d, *o);
  d->add_flag("--json", o->json, "Print what was found as JSON instead of YAML");
  d->footer(
      "\n  rocehil inventory discover --links-from fabric.yaml     links as cabled, from LLDP\n"
      "Exit codes: 0 all probed, 3 a host or switch unreachable (the skeleton has the others).");
  d->callback([o, &exit_code] { exit_code = discover(*o); });
}

}  // namespace rocehil::cli
