#include "settings_task.hpp"

#include "qos_tools.hpp"
#include "rocehil/agent/soft_nic.hpp"

#include <fmt/format.h>

#include <chrono>
#include <filesystem>
#include <fstream>

#include "rocehil/common/error.hpp"
#include "rocehil/settings/assignment.hpp"
#include "rocehil/settings/journal_owner.hpp"
#include "rocehil/settings/journaled_changes.hpp"
#include "rocehil/settings/nic_files.hpp"
#include "rocehil/traffic/nic_counters.hpp"

namespace rocehil::agent {

namespace {

namespace fs = std::filesystem;

std::string iso_now() {
  const std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&t, &tm);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return text;
}

bool is_soft(const SettingsRequest& r) {
  return r.provider == "soft";
}

std::string root_for(const SettingsRequest& r, std::string_view address,
                     const SettingsPlaces& places) {
  return is_soft(r) ? (fs::path(places.soft_dir) / std::string(address)).string() : places.nic_root;
}

struct Nic {
  std::string address, netdev, root;
  bool soft = false;
};

// What a NIC's settings are read and written through: the soft provider's files, for the names
// it takes; a host's NIC files and its QoS tools.
std::unique_ptr<settings::Target> target_of(const std::string& root, const std::string& netdev,
                                            bool soft) {
  if (soft) return std::make_unique<SoftNic>(root, netdev);
  return std::make_unique<HostNic>(root, netdev);
}

// The NICs named by the request's addresses, all under one root (a host's provider is one).
std::vector<Nic> nics_of(const SettingsRequest& r, const SettingsPlaces& places) {
  std::vector<Nic> nics;
  for (const std::string& address : r.addresses) {
    const std::string netdev = places.netdev_of(address);
    if (netdev.empty())
      throw input_error(fmt::format(
          "host '{}': no interface holds {}; the inventory's nic ip must be this host's", r.host,
          address));
    nics.push_back({address, netdev, root_for(r, address, places), is_soft(r)});
    if (is_soft(r) && r.action != SettingsAction::restore)
      SoftNic(nics.back().root, netdev).make_files();
  }
  return nics;
}

std::vector<SettingValue> read_values(const std::vector<Nic>& nics,
                                      const std::vector<SettingValue>& names) {
  std::vector<SettingValue> out;
  for (const Nic& nic : nics) {
    const std::unique_ptr<settings::Target> target = target_of(nic.root, nic.netdev, nic.soft);
    for (const SettingValue& n : names) {
      const settings::Setting* s = settings::find(n.name);
      if (s == nullptr) continue;  // the protocol refused it already
      if (!target->has(*s)) continue;
      if (auto value = target->read(*s)) out.push_back({n.name, std::move(*value), nic.netdev});
    }
  }
  return out;
}

SettingChange change_of(const settings::JournalEntry& e) {
  return {e.setting, e.netdev, e.where, e.before, e.wanted};
}

// One root's changes: a host's NICs under "/" share one journal; the soft provider keeps a root
// (and journal) per address. Journals are kept per fabric (journal.hpp): `fabric` names the
// directory, "" the layout older rocehils wrote.
struct Part {
  settings::JournaledChanges changes;
  std::vector<std::string> netdevs;
};

std::vector<Part> parts_of(const SettingsRequest& r, const std::vector<Nic>& nics,
                           const SettingsPlaces& places, const std::string& fabric) {
  std::vector<Part> parts;
  if (!is_soft(r)) {
    const std::string root = places.nic_root;
    Part p{{[root](const std::string& netdev) { return target_of(root, netdev, false); },
            settings::journal_path(places.journal_dir, fabric, r.host), r.host},
           {}};
    for (const Nic& n : nics) p.netdevs.push_back(n.netdev);
    parts.push_back(std::move(p));
    return parts;
  }
  for (const Nic& n : nics) {
    const std::string root = n.root;
    parts.push_back(
        {{[root](const std::string& netdev) { return target_of(root, netdev, true); },
          settings::journal_path(places.journal_dir, fabric, r.host + ".soft-" + n.address),
          r.host},
         {n.netdev}});
  }
  return parts;
}

std::vector<settings::Assignment> wanted_of(const SettingsRequest& r) {
  std::vector<settings::Assignment> wanted;
  for (const SettingValue& v : r.values) wanted.push_back(settings::assign(v.name, v.value, ""));
  return wanted;
}

SettingsReply apply(const SettingsRequest& r, const std::vector<Nic>& nics,
                    std::vector<Part>& parts) {
  SettingsReply reply;
  reply.action = r.action;
  const std::vector<settings::Assignment> wanted = wanted_of(r);
  for (Part& p : parts) p.changes.check(wanted, p.netdevs);  // every NIC can, before any change
  const std::string started = iso_now();
  std::size_t done = 0;
  try {
    for (; done < parts.size(); ++done)
      for (const settings::JournalEntry& e : parts[done].changes.apply(
               wanted, parts[done].netdevs, r.run, started, r.owner, r.fabric))
        reply.changes.push_back(change_of(e));
  } catch (const Error& e) {
    for (std::size_t i = 0; i < done; ++i) parts[i].changes.restore();
    throw;
  }
  reply.values = read_values(nics, r.values);
  return reply;
}

// Puts back the journals of the request's fabric (and of the layout without one) whose runs are
// gone, or the asking run's own; a journal a live run holds is left alone and named in the reply:
// another command (inventory check, settings restore, the next run) must not undo a running
// run's settings under it.
SettingsReply restore(const SettingsRequest& r, const SettingsPlaces& places) {
  SettingsReply reply;
  reply.action = r.action;
  const settings::Machine here = settings::this_machine();
  const settings::RestorePolicy policy{r.owner, r.gone, r.force};
  std::vector<std::string> fabrics = {r.fabric};
  if (!r.fabric.empty()) fabrics.emplace_back();  // an older rocehil's journals: put back too
  for (const std::string& fabric : fabrics)
    // Whatever provider left a journal, a restore puts it back: the soft one's too.
    for (const std::string provider : {"verbs", "soft"}) {
      SettingsRequest as = r;
      as.provider = provider;
      for (Part& p : parts_of(as, nics_of(as, places), places, fabric)) {
        const settings::JournaledChanges::Left left = p.changes.restore_left(policy, here);
        if (!left.journal) continue;
        if (left.left_alone) {
          reply.in_use.push_back(
              {left.journal->run, left.journal->started_at,
               left.journal->owner.value_or(settings::JournalOwner{}),
               settings::owner_state(left.journal->owner, here) == settings::OwnerState::alive});
          continue;
        }
        reply.journal_found = true;
        if (reply.journal_run.empty()) reply.journal_run = left.journal->run;
        for (const settings::JournalEntry& e : left.put_back) reply.changes.push_back(change_of(e));
      }
    }
  return reply;
}

}  // namespace

SettingsPlaces host_settings_places() {
  SettingsPlaces p;
  p.netdev_of = [](std::string_view address) { return traffic::netdev_with_address(address); };
  return p;
}

SettingsReply handle_settings(const SettingsRequest& r, const SettingsPlaces& places) {
  if (r.action == SettingsAction::restore) return restore(r, places);
  const std::vector<Nic> nics = nics_of(r, places);
  std::vector<Part> parts = parts_of(r, nics, places, r.fabric);
  switch (r.action) {
    case SettingsAction::apply: return apply(r, nics, parts);
    case SettingsAction::restore: break;  // above
    case SettingsAction::check: {
      const std::vector<settings::Assignment> wanted = wanted_of(r);
      for (Part& p : parts) p.changes.check(wanted, p.netdevs);
      SettingsReply reply;
      reply.action = r.action;
      return reply;
    }
    case SettingsAction::read: {
      SettingsReply reply;
      reply.action = r.action;
      reply.values = read_values(nics, r.values);
      return reply;
    }
  }
  throw Error(ExitCode::infrastructure, "settings: unknown action");
}

std::vector<traffic::SoftSetting> soft_settings_for(std::string_view address,
                                                    const SettingsPlaces& places) {
  const fs::path root = fs::path(places.soft_dir) / std::string(address);
  std::error_code ec;
  if (!fs::is_directory(root, ec)) return {};
  const std::string netdev = places.netdev_of(address);
  if (netdev.empty()) return {};
  const settings::NicFiles files(root.string(), netdev);
  std::vector<traffic::SoftSetting> out;
  for (const traffic::SoftSetting& d : traffic::soft_setting_defaults()) {
    const settings::Setting* s = settings::find(d.name);
    if (s == nullptr) continue;
    if (const std::optional<std::string> value = files.read(*s))
      out.push_back({d.name, traffic::soft_setting_is_priorities(d.name)
                                 ? std::int64_t{priority_mask(*value)}
                                 : std::stoll(*value)});
  }
  return out;
}

SoftQos soft_qos_for(std::string_view address, const SettingsPlaces& places) {
  const fs::path root = fs::path(places.soft_dir) / std::string(address);
  std::error_code ec;
  if (!fs::is_directory(root, ec)) return {};
  const std::string netdev = places.netdev_of(address);
  if (netdev.empty()) return {};
  return SoftNic(root.string(), netdev).qos();
}

}  // namespace rocehil::agent
