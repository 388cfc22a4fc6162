#include "rocehil/run/fabric_settings.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <ctime>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "basics/agent_conversation.hpp"
#include "rocehil/common/error.hpp"
#include "rocehil/common/file_safe_name.hpp"
#include "rocehil/remote/agent_link.hpp"
#include "rocehil/remote/as_root.hpp"
#include "rocehil/remote/fan_out.hpp"
#include "rocehil/reports/run_directory.hpp"
#include "rocehil/settings/journal.hpp"

namespace rocehil::run {

namespace {

std::vector<std::string> addresses_of(const inventory::Host& h) {
  std::vector<std::string> out;
  for (const inventory::Nic& n : h.nics)
    if (!n.ip.empty()) out.push_back(n.ip);
  return out;
}

// The testbed's switches as a settings target: read as a whole, written one setting at a time.
class LinkTarget final : public settings::Target {
 public:
  explicit LinkTarget(const FabricLinkAccess& links) : links_(links) {}
  bool has(const settings::Setting& s, std::string* why_not) const override {
    if (s.scope == settings::Scope::fabric_link && links_.read().contains(std::string(s.name)))
      return true;
    if (why_not != nullptr)
      *why_not = s.scope != settings::Scope::fabric_link
                     ? "it is a NIC's setting, not the switches'"
                 : s.tool.find("lossless") != std::string_view::npos
                     ? "it is a knob of the lossless switches, and this testbed has none (bring "
                       "it up with 'rocehil testbed up --lossless')"
                     : "it is not in force there (a testbed brought up with --no-ecn has no ECN "
                       "marking; one brought up with --lossless marks by queue depth: set "
                       "switch.wred_kmin_kb/kmax_kb/pmax_percent)";
    return false;
  }
  std::optional<std::string> read(const settings::Setting& s) const override {
    const auto now = links_.read();
    const auto it = now.find(std::string(s.name));
    if (it == now.end()) return std::nullopt;
    return it->second;
  }
  void write(const settings::Setting& s, const std::string& canonical) const override {
    links_.write(s.name, canonical);
  }
  std::string where(const settings::Setting&) const override { return links_.name; }
  const std::string& netdev() const noexcept override { return none_; }

 private:
  const FabricLinkAccess& links_;
  std::string none_;
};

}  // namespace

std::string fabric_id(const inventory::Inventory& inventory) {
  // '-' for what a file name should not hold: the agents take a fabric as they take a host name.
  if (!inventory.name.empty()) return file_safe_name(inventory.name, '-').substr(0, 128);
  // No name: the file it was read from. FNV-1a 64 of the absolute path: stable from one command
  // to the next on one machine, and different for two inventories in two directories.
  std::error_code ec;
  std::filesystem::path path = std::filesystem::absolute(inventory.file, ec);
  if (!ec) path = path.lexically_normal();
  std::uint64_t hash = 0xcbf29ce484222325ULL;
  for (const char c : path.string()) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 0x100000001b3ULL;
  }
  return fmt::format("inventory-{:016x}", hash);
}

settings::JournaledChanges FabricSettings::link_changes(const std::string& fabric) const {
  const FabricLinkAccess& links = *links_;
  return settings::JournaledChanges(
      [&links](const std::string&) { return std::make_unique<LinkTarget>(links); },
      settings::journal_path(journal_dir_, fabric, file_safe_name(links.name, '-')), links.name);
}

FabricSettings::FabricSettings(std::vector<SettingsHost> hosts, std::string fabric,
                               std::optional<FabricLinkAccess> links,
                               const remote::SshMultiplex* multiplex, std::chrono::seconds timeout,
                               std::string journal_dir, std::size_t fanout)
    : hosts_(std::move(hosts)),
      fabric_(std::move(fabric)),
      here_(settings::this_machine()),
      owner_(settings::this_process(here_)),
      links_(std::move(links)),
      multiplex_(multiplex),
      timeout_(timeout),
      journal_dir_(journal_dir.empty() ? std::string(settings::default_journal_dir)
                                       : std::move(journal_dir)),
      fanout_(fanout) {
  std::erase_if(hosts_, [](const SettingsHost& h) { return addresses_of(*h.host).empty(); });
}

FabricSettings::~FabricSettings() = default;

namespace {

// The request as `host` takes it: its name for the journal and messages, its NICs' addresses.
agent::SettingsRequest request_for(const SettingsHost& h, agent::SettingsRequest request) {
  request.host = h.host->name;  // fabric and owner: the FabricSettings' own, set by the caller
  request.provider = h.provider;
  request.addresses = addresses_of(*h.host);
  return request;
}

// An agent's refusal in its own words, which name host and setting: the conversation's
// preamble dropped.
Error refusal(const Error& e, const std::string& host, agent::SettingsAction action) {
  const std::string message = e.what();
  const std::string preamble =
      fmt::format("agent on {} refused settings {}: ", host, agent::to_string(action));
  if (message.starts_with(preamble)) return Error(e.exit_code(), message.substr(preamble.size()));
  return e;
}

}  // namespace

agent::SettingsReply FabricSettings::ask(const SettingsHost& h, agent::SettingsRequest request) {
  const inventory::Host& host = *h.host;
  request = request_for(h, std::move(request));
  remote::AgentCommand command = remote::host_command(
      host, remote::as_root(host.agent, {"agent"}, remote::WithoutRoot::refuse), multiplex_);
  command.name = host.name;
  try {
    std::unique_ptr<remote::AgentLink> link = remote::launch_agent(command);
    link->send(agent::Request{1, agent::HelloRequest{}});
    conversation::check_protocol(*link,
                                 conversation::expect<agent::HelloReply>(*link, "hello", timeout_));
    link->send(agent::Request{2, request});
    agent::SettingsReply reply = conversation::expect<agent::SettingsReply>(
        *link, fmt::format("settings {}", agent::to_string(request.action)), timeout_);
    link->close_input();
    return reply;
  } catch (const Error& e) {
    const std::string message = e.what();
    if (message.find(remote::not_root_marker) != std::string::npos)
      throw input_error(fmt::format(
          "host '{}': changing fabric settings needs root, and its ssh user is not root and has "
          "no passwordless sudo; log in as root (the inventory's ssh user) or allow "
          "passwordless sudo for {}",
          host.name, host.agent));
    throw refusal(e, host.name, request.action);
  }
}

std::vector<FabricSettings::Answer> FabricSettings::ask_dialed(
    const std::vector<const SettingsHost*>& hosts, const agent::SettingsRequest& request) {
  std::vector<Answer> answers(hosts.size());
  std::vector<std::unique_ptr<remote::AgentLink>> links(hosts.size());
  const auto failed = [&](std::size_t i, const std::exception& e) {
    const auto* error = dynamic_cast<const Error*>(&e);
    answers[i].code = error != nullptr ? error->exit_code() : ExitCode::infrastructure;
    answers[i].error = error != nullptr
                           ? refusal(*error, hosts[i]->host->name, request.action).what()
                           : fmt::format("host '{}': {}", hosts[i]->host->name, e.what());
    links[i].reset();
  };
  // Every agent works on its request at once; the replies are then read in the hosts' order.
  for (std::size_t i = 0; i < hosts.size(); ++i) try {
      const std::string& name = hosts[i]->host->name;
      links[i] = dialed_->open_session(name, name);
      links[i]->send(agent::Request{1, request_for(*hosts[i], request)});
    } catch (const std::exception& e) {
      failed(i, e);
    }
  for (std::size_t i = 0; i < hosts.size(); ++i) try {
      if (!links[i]) continue;
      answers[i].reply = conversation::expect<agent::SettingsReply>(
          *links[i], fmt::format("settings {}", agent::to_string(request.action)), timeout_);
      links[i]->close_input();
    } catch (const std::exception& e) {
      failed(i, e);
    }
  return answers;
}

// The switches' journal is on this machine: judged here, the fabric's and the one an older
// rocehil wrote without a fabric.
LeftJournals FabricSettings::restore_links(bool force) {
  LeftJournals out;
  if (!links_) return out;
  const settings::RestorePolicy policy{owner_, {}, force};
  std::vector<std::string> fabrics = {fabric_};
  if (!fabric_.empty()) fabrics.emplace_back();  // an older rocehil's, without a fabric
  for (const std::string& fabric : fabrics) {
    settings::JournaledChanges changes = link_changes(fabric);
    const settings::JournaledChanges::Left left = changes.restore_left(policy, here_);
    if (!left.journal) continue;
    if (left.left_alone) {
      out.in_use.push_back(
          {links_->name, left.journal->run, left.journal->started_at,
           left.journal->owner.value_or(settings::JournalOwner{}),
           settings::owner_state(left.journal->owner, here_) == settings::OwnerState::alive});
      continue;
    }
    SettingsRestored restored{links_->name, left.journal->run, {}};
    for (const settings::JournalEntry& e : left.put_back)
      restored.changes.push_back({e.setting, e.netdev, e.where, e.before, e.wanted});
    out.restored.push_back(std::move(restored));
  }
  return out;
}

std::vector<FabricSettings::Answer> FabricSettings::ask_all(
    const std::vector<const SettingsHost*>& hosts, const agent::SettingsRequest& request) {
  if (dialed_ != nullptr) return ask_dialed(hosts, request);
  std::vector<Answer> answers(hosts.size());
  remote::fan_out(hosts.size(), fanout_, [&](std::size_t i) {
    try {
      answers[i].reply = ask(*hosts[i], request);
    } catch (const Error& e) {
      answers[i].code = e.exit_code();
      answers[i].error = e.what();
    } catch (const std::exception& e) {
      answers[i].code = ExitCode::infrastructure;
      answers[i].error = fmt::format("host '{}': {}", hosts[i]->host->name, e.what());
    }
  });
  return answers;
}

std::vector<const SettingsHost*> FabricSettings::all_hosts() const {
  std::vector<const SettingsHost*> out;
  for (const SettingsHost& h : hosts_) out.push_back(&h);
  return out;
}

LeftJournals FabricSettings::restore_left(
    const std::function<bool(const inventory::Host&)>& journal_on, bool force) {
  LeftJournals out;
  agent::SettingsRequest r;
  r.action = agent::SettingsAction::restore;
  r.fabric = fabric_;
  r.force = force;
  std::vector<const SettingsHost*> hosts = all_hosts();
  if (journal_on)
    std::erase_if(hosts, [&](const SettingsHost* h) { return !journal_on(*h->host); });
  // A host judges owners that ran under its own kernel; the others come back in use, and those
  // whose controller ran on this machine are judged here and, when gone, asked for again.
  agent::SettingsRequest again = r;
  std::vector<const SettingsHost*> again_hosts;
  const auto take = [&](const std::vector<const SettingsHost*>& asked,
                        const std::vector<Answer>& answers, bool first_round) {
    for (std::size_t i = 0; i < asked.size(); ++i) {
      if (!answers[i].reply) throw Error(answers[i].code, answers[i].error);
      const agent::SettingsReply& reply = *answers[i].reply;
      const std::string& name = asked[i]->host->name;
      if (reply.journal_found) out.restored.push_back({name, reply.journal_run, reply.changes});
      bool ask_again = false;
      for (const agent::SettingsInUse& u : reply.in_use) {
        const settings::OwnerState here = settings::owner_state(u.owner, here_);
        if (first_round && !u.alive && here == settings::OwnerState::gone) {
          again.gone.push_back(u.owner);
          ask_again = true;
          continue;
        }
        out.in_use.push_back(
            {name, u.run, u.since, u.owner, u.alive || here == settings::OwnerState::alive});
      }
      if (ask_again) again_hosts.push_back(asked[i]);
    }
  };
  take(hosts, ask_all(hosts, r), true);
  if (!again_hosts.empty()) take(again_hosts, ask_all(again_hosts, again), false);
  LeftJournals links = restore_links(force);
  for (SettingsRestored& left : links.restored) out.restored.push_back(std::move(left));
  for (JournalInUse& u : links.in_use) out.in_use.push_back(std::move(u));
  return out;
}

void FabricSettings::apply(const std::vector<settings::Assignment>& wanted,
                           const std::string& run) {
  // What an earlier apply() left in force was put back (restore()) before this one: a test's
  // own settings follow the run's.
  in_force_.clear();
  changes_.clear();
  std::vector<settings::Assignment> nic, link;
  for (const settings::Assignment& a : wanted)
    (a.setting->scope == settings::Scope::nic ? nic : link).push_back(a);
  if (!link.empty() && !links_)
    throw input_error(fmt::format(
        "{}: {} is a setting of the testbed's switches, and this inventory is not a testbed's "
        "(no testbed.json beside it); a real switch's configuration is the site's to change",
        link.front().origin, link.front().setting->name));
  const auto request = [&](agent::SettingsAction action) {
    agent::SettingsRequest r;
    r.action = action;
    r.run = run;
    r.fabric = fabric_;
    r.owner = owner_;
    for (const settings::Assignment& a : nic)
      r.values.push_back({std::string(a.setting->name), a.value, ""});
    return r;
  };
  const std::vector<const SettingsHost*> hosts = all_hosts();
  // Every host can take every setting before any is changed.
  if (!nic.empty()) {
    const std::vector<Answer> checked = ask_all(hosts, request(agent::SettingsAction::check));
    for (const Answer& a : checked) {
      if (a.reply) continue;
      // Name where the setting was asked for: the origin of the one refused ("cannot set NAME:"),
      // else of the first the error names (its reason may list others).
      std::string origin;
      for (const settings::Assignment& n : nic)
        if (a.error.find(fmt::format("cannot set {}:", n.setting->name)) != std::string::npos) {
          origin = n.origin;
          break;
        }
      for (const settings::Assignment& n : nic)
        if (origin.empty() && a.error.find(n.setting->name) != std::string::npos) origin = n.origin;
      throw Error(a.code, origin.empty() ? a.error : fmt::format("{}: {}", origin, a.error));
    }
  }
  if (!link.empty()) link_changes(fabric_).check(link, {""});
  if (link.size() > 1 && links_ && links_->order) {
    // Written one at a time: in an order every step of which the switches take.
    std::vector<std::pair<std::string, std::string>> wanted_links;
    for (const settings::Assignment& a : link)
      wanted_links.emplace_back(std::string(a.setting->name), a.value);
    std::vector<settings::Assignment> ordered;
    for (const auto& [name, value] : links_->order(std::move(wanted_links)))
      for (const settings::Assignment& a : link)
        if (a.setting->name == name) ordered.push_back(a);
    if (ordered.size() == link.size()) link = std::move(ordered);
  }
  try {
    if (!nic.empty()) {
      // Marked before: a host that fails halfway has changed some of it.
      changed_hosts_ = hosts;
      const std::vector<Answer> applied = ask_all(hosts, request(agent::SettingsAction::apply));
      for (std::size_t i = 0; i < hosts.size(); ++i) {
        if (!applied[i].reply) throw Error(applied[i].code, applied[i].error);
        for (const agent::SettingChange& c : applied[i].reply->changes)
          changes_.push_back({hosts[i]->host->name, c});
        for (const agent::SettingValue& v : applied[i].reply->values)
          in_force_.push_back({hosts[i]->host->name, v.netdev, v.name, v.value});
      }
    }
    if (!link.empty()) {
      settings::JournaledChanges changes = link_changes(fabric_);
      links_changed_ = true;  // before: a failure halfway changed some of it
      for (const settings::JournalEntry& e :
           changes.apply(link, {""}, run, reports::iso_utc(std::time(nullptr)), owner_, fabric_))
        changes_.push_back({"", {e.setting, "", e.where, e.before, e.wanted}});
      const LinkTarget now(*links_);
      for (const settings::Assignment& a : link)
        in_force_.push_back(
            {"", "", std::string(a.setting->name), now.read(*a.setting).value_or("")});
    }
  } catch (const Error& e) {
    settings::throw_after_putting_back(e, [this] { restore(); });
  }
}

std::vector<SettingsRestored> FabricSettings::restore() {
  std::vector<SettingsRestored> out;
  std::vector<std::string> failed;
  agent::SettingsRequest r;
  r.action = agent::SettingsAction::restore;
  r.fabric = fabric_;
  r.owner = owner_;  // its own journals: put back although their run (this one) is alive
  const std::vector<Answer> answers = ask_all(changed_hosts_, r);
  for (std::size_t i = 0; i < changed_hosts_.size(); ++i) {
    if (answers[i].reply)
      out.push_back({changed_hosts_[i]->host->name, answers[i].reply->journal_run,
                     answers[i].reply->changes});
    else
      failed.push_back(answers[i].error);
  }
  changed_hosts_.clear();
  if (links_changed_) {
    try {
      settings::JournaledChanges changes = link_changes(fabric_);
      const std::optional<settings::Journal> journal = settings::load(changes.journal_path());
      if (journal) {
        SettingsRestored restored{links_->name, journal->run, {}};
        for (const settings::JournalEntry& e : changes.restore())
          restored.changes.push_back({e.setting, e.netdev, e.where, e.before, e.wanted});
        out.push_back(std::move(restored));
      }
      links_changed_ = false;
    } catch (const Error& e) {
      failed.push_back(e.what());
    }
  }
  if (!failed.empty())
    throw Error(ExitCode::infrastructure,
                failed.size() == 1
                    ? failed.front()
                    : fmt::format("{} (and {} more)", failed.front(), failed.size() - 1));
  in_force_.clear();  // nothing of apply()'s is in force now: nothing to find changed under it
  return out;
}

std::vector<SettingDrift> FabricSettings::changed_under_run() {
  std::vector<SettingDrift> out;
  if (in_force_.empty()) return out;
  std::vector<std::string> names;
  for (const SettingInForce& v : in_force_)
    if (std::find(names.begin(), names.end(), v.name) == names.end()) names.push_back(v.name);
  const std::vector<SettingInForce> now = read(names);
  for (const SettingInForce& v : in_force_) {
    const auto it = std::find_if(now.begin(), now.end(), [&v](const SettingInForce& n) {
      return n.host == v.host && n.netdev == v.netdev && n.name == v.name;
    });
    const std::string found = it == now.end() ? std::string() : it->value;
    if (found != v.value) out.push_back({v.host, v.netdev, v.name, v.value, found});
  }
  return out;
}

std::vector<SettingInForce> FabricSettings::read(const std::vector<std::string>& names) {
  std::vector<SettingInForce> out;
  agent::SettingsRequest r;
  r.action = agent::SettingsAction::read;
  std::vector<std::string> link_names;
  for (const std::string& n : names) {
    const settings::Setting* s = settings::find(n);
    if (s == nullptr) continue;
    if (s->scope == settings::Scope::nic)
      r.values.push_back({n, "", ""});
    else
      link_names.push_back(n);
  }
  if (!r.values.empty()) {
    const std::vector<const SettingsHost*> hosts = all_hosts();
    const std::vector<Answer> answers = ask_all(hosts, r);
    for (std::size_t i = 0; i < hosts.size(); ++i) {
      if (!answers[i].reply) throw Error(answers[i].code, answers[i].error);
      for (const agent::SettingValue& v : answers[i].reply->values)
        out.push_back({hosts[i]->host->name, v.netdev, v.name, v.value});
    }
  }
  if (!link_names.empty() && links_) {
    const auto now = links_->read();
    for (const std::string& n : link_names)
      if (const auto it = now.find(n); it != now.end()) out.push_back({"", "", n, it->second});
  }
  return out;
}

std::vector<SettingDifference> declared_differences(const std::vector<SettingsHost>& hosts,
                                                    const std::vector<SettingInForce>& in_force) {
  std::vector<SettingDifference> out;
  std::vector<std::string> switch_names_done;
  for (const SettingsHost& h : hosts)
    for (const settings::Assignment& a : h.host->settings) {
      const std::string name(a.setting->name);
      const bool on_switches = a.setting->scope == settings::Scope::fabric_link;
      // A host without a RoCE NIC (a capture host) has no NIC settings to compare.
      if (!on_switches && addresses_of(*h.host).empty()) continue;
      if (on_switches) {
        if (std::find(switch_names_done.begin(), switch_names_done.end(), name) !=
            switch_names_done.end())
          continue;
        switch_names_done.push_back(name);
      }
      const std::string host = on_switches ? std::string() : h.host->name;
      bool seen = false;
      for (const SettingInForce& v : in_force) {
        if (v.host != host || v.name != name) continue;
        seen = true;
        if (v.value != a.value) out.push_back({host, v.netdev, name, a.value, a.origin, v.value});
      }
      if (!seen) out.push_back({host, "", name, a.value, a.origin, std::nullopt});
    }
  return out;
}

std::string drift_text(const std::vector<SettingDrift>& drift) {
  if (drift.empty()) return {};
  const SettingDrift& d = drift.front();
  std::string where = d.host.empty() ? "the switches" : d.host;
  if (!d.netdev.empty()) where += " " + d.netdev;
  return fmt::format("setting {} on {} read {}, not {} as the run set it{}", d.name, where,
                     d.found.empty() ? "nothing" : d.found, d.set,
                     drift.size() == 1 ? "" : fmt::format(" (and {} more)", drift.size() - 1));
}

nlohmann::json settings_json(const std::vector<settings::Assignment>& wanted,
                             const FabricSettings& applied) {
  nlohmann::json asked = nlohmann::json::array();
  for (const settings::Assignment& a : wanted)
    asked.push_back({{"name", a.setting->name}, {"value", a.value}, {"origin", a.origin}});
  nlohmann::json in_force = nlohmann::json::array();
  for (const SettingInForce& v : applied.in_force())
    in_force.push_back(
        {{"host", v.host}, {"netdev", v.netdev}, {"name", v.name}, {"value", v.value}});
  nlohmann::json changes = nlohmann::json::array();
  for (const HostSettingChange& c : applied.changes())
    changes.push_back({{"host", c.host},
                       {"netdev", c.change.netdev},
                       {"name", c.change.name},
                       {"before", c.change.before},
                       {"after", c.change.wanted}});
  return {{"asked", asked}, {"in_force", in_force}, {"changes", changes}};
}

}  // namespace rocehil::run
