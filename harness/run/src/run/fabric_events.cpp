#include "rocehil/run/fabric_events.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <ctime>

#include "rocehil/common/error.hpp"
#include "rocehil/remote/as_root.hpp"
#include "rocehil/remote/run_command.hpp"
#include "rocehil/reports/run_directory.hpp"
#include "rocehil/settings/journal.hpp"
#include "rocehil/switches/port_admin.hpp"

namespace rocehil::run {

namespace {

constexpr std::string_view link_kind = "link";
constexpr std::string_view nic_kind = "nic";

const inventory::Link& find_link(const inventory::Inventory& inventory, const std::string& name) {
  for (const inventory::Link& l : inventory.links)
    if (l.name == name) return l;
  throw input_error(fmt::format("link '{}' is not in {}'s links", name, inventory.file));
}

const inventory::Host& find_host(const inventory::Inventory& inventory, const std::string& name) {
  if (const inventory::Host* h = inventory.find_host(name)) return *h;
  throw input_error(fmt::format("host '{}' is not in {}'s hosts", name, inventory.file));
}

const std::string* command_text(const std::vector<inventory::NamedCommand>& commands,
                                const std::string& name) {
  for (const inventory::NamedCommand& c : commands)
    if (c.name == name) return &c.text;
  return nullptr;
}

// A switch as ssh reaches it: its address, its ssh settings, never a local launcher.
inventory::Host as_ssh_host(const inventory::Switch& s) {
  inventory::Host h;
  h.name = s.name;
  h.address = s.address.empty() ? s.name : s.address;
  h.ssh = s.ssh;
  h.launcher = inventory::Launcher::ssh;
  return h;
}

// What a restore reports for one journal entry: the link, or the host and its NICs.
SettingsRestored restored_of(const settings::Journal& journal, const settings::JournalEntry& e) {
  SettingsRestored r;
  r.host = e.setting == link_kind ? "link " + e.netdev : e.netdev;
  r.left_by = journal.run;
  r.changes.push_back({"admin_state", "", e.where, e.before, e.wanted});
  return r;
}

}  // namespace

std::string port_command(const std::string& text, const std::string& port) {
  const std::string quoted = remote::remote_command_line({port});
  std::string out;
  for (std::size_t at = 0;;) {
    const std::size_t found = text.find("{port}", at);
    out += text.substr(at, found - at);
    if (found == std::string::npos) return out;
    out += quoted;
    at = found + 6;
  }
}

FabricEvents::FabricEvents(const inventory::Inventory& inventory, std::string fabric,
                           std::optional<FabricLinkAccess> links,
                           const remote::SshMultiplex* multiplex, std::string run,
                           std::string journal_dir)
    : inventory_(inventory),
      fabric_(std::move(fabric)),
      links_(std::move(links)),
      multiplex_(multiplex),
      run_(std::move(run)),
      journal_(settings::journal_path(
          journal_dir.empty() ? std::string(settings::default_journal_dir) : journal_dir, fabric_,
          down_journal_name)),
      here_(settings::this_machine()),
      owner_(settings::this_process(here_)) {}

std::string FabricEvents::run_on_host(const inventory::Host& host,
                                      const std::vector<std::string>& argv,
                                      const std::string& what) {
  const remote::AgentCommand c = remote::host_command(host, argv, multiplex_);
  const remote::CommandResult r =
      remote::run_command(c.argv, {.timeout = std::chrono::seconds(30)});
  if (!r.succeeded())
    throw Error(ExitCode::infrastructure,
                fmt::format("host '{}': {} failed: {}", host.name, what, r.reason()));
  return r.out;
}

std::string FabricEvents::run_on_switch(const inventory::Switch& s, const std::string& text,
                                        const std::string& what) {
  std::vector<std::string> argv;
  if (!s.netns.empty()) {
    // A testbed's switch is a namespace of this machine: its shell runs there.
    argv = {"ip", "netns", "exec", s.netns, "sh", "-c", text};
  } else {
    // The switch's login shell runs the line as written (a switch's CLI may be no POSIX shell,
    // so it is not wrapped in one); what rocehil put into it is quoted (port_command).
    argv = remote::host_command(as_ssh_host(s), {"true"}, nullptr).argv;
    argv.back() = text;
  }
  const remote::CommandResult r = remote::run_command(argv, {.timeout = std::chrono::seconds(30)});
  if (!r.succeeded())
    throw Error(ExitCode::infrastructure,
                fmt::format("switch '{}': {} failed: {}", s.name, what, r.reason()));
  return r.out;
}

std::string FabricEvents::way_of(const std::string& name) const {
  if (links_ && links_->set_link) return links_->name;
  // The end take() will use, in its order; a link it cannot take fails there, not here.
  for (const inventory::Link& l : inventory_.links) {
    if (l.name != name) continue;
    for (const inventory::LinkEnd* end : {&l.a, &l.b}) {
      const inventory::Switch* s = inventory_.find_switch(end->node);
      if (s == nullptr) continue;
      if (!s->netns.empty()) return "ip -n " + s->netns;
      if (!s->link_down.empty()) return "link_down";
      if (s->snmp && s->snmp->can_write())
        return fmt::format("SNMP SET ifAdminStatus on {} {}", s->name, end->port);
    }
  }
  return "link_down";
}

std::string FabricEvents::take(const std::string& kind, const std::string& name, bool up) {
  const char* state = up ? "up" : "down";
  if (kind == link_kind) {
    if (links_ && links_->set_link) {
      links_->set_link(name, up);
      return fmt::format("{}: ip link set {} at both ends of {}", links_->name, state, name);
    }
    const inventory::Link& l = find_link(inventory_, name);
    for (const inventory::LinkEnd* end : {&l.a, &l.b}) {
      const inventory::Switch* s = inventory_.find_switch(end->node);
      if (s == nullptr) continue;
      if (!s->netns.empty()) {
        const std::vector<std::string> argv = {"ip",  "-n",  s->netns,  "link",
                                               "set", "dev", end->port, state};
        const remote::CommandResult r =
            remote::run_command(argv, {.timeout = std::chrono::seconds(30)});
        if (!r.succeeded())
          throw Error(ExitCode::infrastructure,
                      fmt::format("link '{}': ip link set {} {} in {} "
                                  "failed: {}",
                                  name, end->port, state, s->netns, r.reason()));
        return fmt::format("ip -n {} link set dev {} {}", s->netns, end->port, state);
      }
      const std::string& text = up ? s->link_up : s->link_down;
      if (!text.empty()) {
        const std::string line = port_command(text, end->port);
        run_on_switch(*s, line, fmt::format("link_{} of {}", state, end->port));
        return fmt::format("{}: {}", s->name, line);
      }
      if (s->snmp && s->snmp->can_write()) {
        // Read back before it returns: the event's time is when the port is down.
        switches::set_port_admin_status(
            *s, end->port, up ? switches::AdminStatus::up : switches::AdminStatus::down);
        return fmt::format("{}: SNMP SET ifAdminStatus {} {}", s->name, end->port, state);
      }
    }
    throw input_error(
        fmt::format("link '{}': neither end is a switch rocehil can take it {} on "
                    "(give the switch link_down and link_up, or an SNMP write credential, in {})",
                    name, state, inventory_.file));
  }
  const inventory::Host& h = find_host(inventory_, name);
  std::string did;
  for (const inventory::Nic& n : h.nics) {
    if (n.netdev.empty()) continue;
    run_on_host(
        h,
        remote::as_root("ip", {"link", "set", "dev", n.netdev, state}, remote::WithoutRoot::refuse),
        fmt::format("ip link set dev {} {}", n.netdev, state));
    did += fmt::format("{}{}: ip link set dev {} {}", did.empty() ? "" : "; ", h.name, n.netdev,
                       state);
  }
  if (did.empty())
    throw input_error(
        fmt::format("host '{}' has no NIC with a netdev in {}", name, inventory_.file));
  return did;
}

void FabricEvents::journal_down(const std::string& kind, const std::string& name,
                                const std::string& where) {
  std::optional<settings::Journal> journal = settings::load(journal_);
  if (journal && journal->owner != owner_)
    throw Error(ExitCode::infrastructure,
                fmt::format("{} lists links or NICs taken down by {}; bring them up first "
                            "('rocehil settings restore')",
                            journal_, settings::held_by_text(*journal)));
  if (!journal)
    journal = settings::Journal{"links and NICs", run_,  reports::iso_utc(std::time(nullptr)), {},
                                fabric_,          owner_};
  journal->entries.push_back({kind, name, where, "up", "down"});
  settings::save(*journal, journal_);
}

void FabricEvents::journal_up(const std::string& kind, const std::string& name) {
  std::optional<settings::Journal> journal = settings::load(journal_);
  if (!journal) return;
  std::erase_if(journal->entries, [&](const settings::JournalEntry& e) {
    return e.setting == kind && e.netdev == name;
  });
  if (!journal->entries.empty()) {
    settings::save(*journal, journal_);
  } else if (std::remove(journal_.c_str()) != 0) {
    throw system_error(fmt::format("{} is up, but {} could not be removed", name, journal_), errno);
  }
}

std::string FabricEvents::link(const std::string& link, bool up) {
  const std::string kind(link_kind);
  if (up) {
    const std::string did = take(kind, link, true);
    std::erase(down_, std::pair{kind, link});
    journal_up(kind, link);
    return did;
  }
  // Journaled before: a controller killed while (or after) it goes down leaves the way back.
  journal_down(kind, link, way_of(link));
  down_.emplace_back(kind, link);
  return take(kind, link, false);
}

std::string FabricEvents::nic(const std::string& host, bool up) {
  const std::string kind(nic_kind);
  if (up) {
    const std::string did = take(kind, host, true);
    std::erase(down_, std::pair{kind, host});
    journal_up(kind, host);
    return did;
  }
  journal_down(kind, host, "ip link set dev NETDEV down");
  down_.emplace_back(kind, host);
  return take(kind, host, false);
}

std::string FabricEvents::command(const suites::Event& e) {
  if (!e.host.empty()) {
    const inventory::Host& h = find_host(inventory_, e.host);
    const std::string* text = command_text(h.commands, e.command);
    if (text == nullptr)
      throw input_error(
          fmt::format("host '{}' has no command '{}' in {}", e.host, e.command, inventory_.file));
    run_on_host(h, {"sh", "-c", *text}, fmt::format("command {} ({})", e.command, *text));
    return fmt::format("{}: {}", h.name, *text);
  }
  const inventory::Switch* s = inventory_.find_switch(e.switch_name);
  if (s == nullptr)
    throw input_error(
        fmt::format("switch '{}' is not in {}'s switches", e.switch_name, inventory_.file));
  const std::string* text = command_text(s->commands, e.command);
  if (text == nullptr)
    throw input_error(fmt::format("switch '{}' has no command '{}' in {}", e.switch_name, e.command,
                                  inventory_.file));
  run_on_switch(*s, *text, fmt::format("command {} ({})", e.command, *text));
  return fmt::format("{}: {}", s->name, *text);
}

std::vector<BroughtUp> FabricEvents::bring_up_all() {
  std::vector<BroughtUp> out;
  // Newest first, as a journal is put back.
  const auto left = std::vector(down_.rbegin(), down_.rend());
  for (const auto& [kind, name] : left) {
    BroughtUp b{kind == link_kind ? "link " + name : "host " + name, "", ""};
    try {
      b.did = kind == link_kind ? link(name, true) : nic(name, true);
    } catch (const std::exception& e) {
      b.error = e.what();
    }
    out.push_back(std::move(b));
  }
  return out;
}

LeftJournals FabricEvents::restore_left(bool force) {
  LeftJournals out;
  std::optional<settings::Journal> journal = settings::load(journal_);
  if (!journal) return out;
  const settings::RestorePolicy policy{owner_, {}, force};
  if (!settings::may_put_back(*journal, policy, here_)) {
    out.in_use.push_back(
        {journal->host, journal->run, journal->started_at,
         journal->owner.value_or(settings::JournalOwner{}),
         settings::owner_state(journal->owner, here_) == settings::OwnerState::alive});
    return out;
  }
  std::vector<std::string> failed;
  std::vector<settings::JournalEntry> kept;
  // Newest first: what went down last comes up first.
  for (auto e = journal->entries.rbegin(); e != journal->entries.rend(); ++e) {
    try {
      take(e->setting, e->netdev, true);
      out.restored.push_back(restored_of(*journal, *e));
    } catch (const std::exception& err) {
      failed.push_back(err.what());
      kept.insert(kept.begin(), *e);
    }
  }
  journal->entries = kept;
  if (!kept.empty())
    settings::save(*journal, journal_);
  else if (std::remove(journal_.c_str()) != 0)
    throw system_error(fmt::format("links and NICs are up, but {} could not be removed", journal_),
                       errno);
  if (!failed.empty())
    throw Error(ExitCode::infrastructure, fmt::format("could not bring up {} of what {} lists: {}",
                                                      failed.size(), journal_, failed.front()));
  return out;
}

}  // namespace rocehil::run
