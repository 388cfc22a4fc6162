#include "fabric/settings_text.hpp"

#include <fmt/format.h>

namespace rocehil::cli {

namespace {

std::string where(const std::string& host, const std::string& netdev) {
  if (host.empty()) return "switches";
  return netdev.empty() ? host : host + " " + netdev;
}

}  // namespace

std::string left_restored_line(const run::SettingsRestored& r) {
  std::string changes;
  for (const agent::SettingChange& c : r.changes)
    changes += fmt::format("{}{} {} -> {}{}", changes.empty() ? "" : ", ", c.name, c.wanted,
                           c.before, c.netdev.empty() ? "" : " (" + c.netdev + ")");
  return fmt::format("settings left changed by run {} on {} put back: {}",
                     r.left_by.empty() ? "?" : r.left_by, r.host,
                     changes.empty() ? "nothing was in force any more" : changes);
}

nlohmann::ordered_json in_use_json(const run::JournalInUse& u) {
  return {{"host", u.host},
          {"run", u.run},
          {"since", u.since},
          {"pid", u.owner.pid},
          {"machine", u.owner.machine},
          {"alive", u.alive}};
}

std::string in_use_line(const run::JournalInUse& u) {
  const std::string held =
      fmt::format("run {} (pid {} on {}) since {}", u.run.empty() ? "?" : u.run, u.owner.pid,
                  u.owner.machine.empty() ? "an unnamed machine" : u.owner.machine, u.since);
  if (u.alive)
    return fmt::format("settings journal on {} in use by {}: left alone, not put back", u.host,
                       held);
  return fmt::format(
      "settings journal on {} held by {}: whether that run is alive cannot be told from here; "
      "left alone (ask from {}, or 'rocehil settings restore --force' once it is gone)",
      u.host, held, u.owner.machine.empty() ? "its machine" : u.owner.machine);
}

std::string in_force_line(const std::vector<run::SettingInForce>& in_force) {
  std::string out;
  for (const run::SettingInForce& v : in_force)
    out += fmt::format("{}{} {}={}", out.empty() ? "" : ", ", where(v.host, v.netdev), v.name,
                       v.value);
  return "settings in force (read back): " + (out.empty() ? std::string("none") : out);
}

std::string restored_line(const std::vector<run::SettingsRestored>& restored) {
  std::size_t changes = 0;
  std::string names;
  for (std::size_t i = 0; i < restored.size(); ++i) {
    changes += restored[i].changes.size();
    if (i < 8) names += fmt::format("{}{}", i == 0 ? "" : ", ", restored[i].host);
  }
  if (restored.size() > 8) names += fmt::format(" and {} more", restored.size() - 8);
  return fmt::format("settings put back and read back: {} change(s) ({})", changes,
                     names.empty() ? "none" : names);
}

}  // namespace rocehil::cli
