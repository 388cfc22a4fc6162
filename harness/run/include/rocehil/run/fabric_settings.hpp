#pragma once

// The controller's side of fabric settings: a run's (or a bisection step's) settings applied to
// every host through its agent and to the testbed's switches, each read back; every change put
// back at the end; and journals left by a controller that was killed found and put back first.

#include <chrono>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "rocehil/agent/protocol.hpp"
#include "rocehil/common/error.hpp"
#include "rocehil/inventory/inventory.hpp"
#include "rocehil/remote/dialed_agents.hpp"
#include "rocehil/remote/host_ssh.hpp"
#include "rocehil/settings/assignment.hpp"
#include "rocehil/settings/journaled_changes.hpp"

namespace rocehil::run {

// The switches' settings (catalogue scope fabric_link): the testbed's, through functions the
// command line gives (run does not build fabrics). Unset: the inventory is not a testbed's.
struct FabricLinkAccess {
  std::string name;  // for messages and journals: "testbed tb1"
  std::function<std::map<std::string, std::string>()> read;
  std::function<void(std::string_view setting, int value)> write;
};

// A host whose settings a run changes, and the provider its traffic uses there.
struct SettingsHost {
  const inventory::Host* host = nullptr;
  std::string provider;  // "verbs" or "soft"
};

// A value in force, as read back: host and netdev empty for the fabric's links.
struct SettingInForce {
  std::string host, netdev, name, value;
  bool operator==(const SettingInForce&) const = default;
};

// A change made or undone on one host ("" for the fabric's links).
struct HostSettingChange {
  std::string host;
  agent::SettingChange change;
};

// What a restore found and put back on one host.
struct SettingsRestored {
  std::string host;
  std::string left_by;  // the run that left the journal
  std::vector<agent::SettingChange> changes;
};

class FabricSettings {
 public:
  FabricSettings(std::vector<SettingsHost> hosts, std::optional<FabricLinkAccess> links,
                 const remote::SshMultiplex* multiplex, std::chrono::seconds timeout,
                 std::string journal_dir = {}, std::size_t fanout = 32);
  ~FabricSettings();
  FabricSettings(const FabricSettings&) = delete;
  FabricSettings& operator=(const FabricSettings&) = delete;

  // Asks the run's agents that dialed in (one session per host and request) instead of starting
  // one per host and request. Each of them then also puts back what it applied should the
  // controller go before it restores (agent_transport.hpp).
  void ask_through(remote::DialedAgents& dialed) { dialed_ = &dialed; }

  // Puts back what journals left on the hosts (and for the switches) say. Returns one entry per
  // host that had one. Throws rocehil::Error naming the host when one cannot be put back.
  // `journal_on`, when given, says which hosts have one (the preflight lists them): only those
  // are asked.
  std::vector<SettingsRestored> restore_left(
      const std::function<bool(const inventory::Host&)>& journal_on = {});

  // Every host and the switches checked able to take `wanted` (nothing changed otherwise), then
  // changed, journaled on each host before each change and read back. On any failure what was
  // changed anywhere is put back, and the error (naming host, setting, wanted and found) thrown.
  void apply(const std::vector<settings::Assignment>& wanted, const std::string& run);

  // Puts back everything apply() changed, reading each value back. Safe to call twice; tries
  // every host before throwing for the first that failed.
  std::vector<SettingsRestored> restore();

  // The values in force after apply(), as read back; the changes it made.
  const std::vector<SettingInForce>& in_force() const noexcept { return in_force_; }
  const std::vector<HostSettingChange>& changes() const noexcept { return changes_; }

  // The values in force of `names` on every host (nic settings) and the switches (fabric_link
  // settings); a host or NIC without one is left out.
  std::vector<SettingInForce> read(const std::vector<std::string>& names);

 private:
  // One host's answer, or why there is none.
  struct Answer {
    std::optional<agent::SettingsReply> reply;
    ExitCode code = ExitCode::infrastructure;
    std::string error;
  };
  agent::SettingsReply ask(const SettingsHost& h, agent::SettingsRequest request);
  // ask_all over dialed_: every request sent, then every reply awaited.
  std::vector<Answer> ask_dialed(const std::vector<const SettingsHost*>& hosts,
                                 const agent::SettingsRequest& request);
  // Every host asked, `fanout` at a time; answers in the hosts' order.
  std::vector<Answer> ask_all(const std::vector<const SettingsHost*>& hosts,
                              const agent::SettingsRequest& request);
  std::vector<const SettingsHost*> all_hosts() const;
  std::vector<SettingsRestored> restore_links();
  settings::JournaledChanges link_changes() const;

  std::vector<SettingsHost> hosts_;
  std::optional<FabricLinkAccess> links_;
  const remote::SshMultiplex* multiplex_;
  std::chrono::seconds timeout_;
  std::string journal_dir_;
  std::size_t fanout_;
  remote::DialedAgents* dialed_ = nullptr;
  std::vector<const SettingsHost*> changed_hosts_;
  bool links_changed_ = false;
  std::vector<SettingInForce> in_force_;
  std::vector<HostSettingChange> changes_;
};

// A declared setting (the inventory's `settings:`) that is not what is in force.
struct SettingDifference {
  std::string host;                     // "" for the testbed's switches
  std::string netdev;                   // "" when the setting is on none of the host's NICs
  std::string name, declared, origin;   // origin: "fabric.yaml:9:5"
  std::optional<std::string> in_force;  // absent: the host's NICs do not have it
};
// Every host's declared settings against the values read on it (FabricSettings::read of the
// declared names); a switch setting is compared once.
std::vector<SettingDifference> declared_differences(const std::vector<SettingsHost>& hosts,
                                                    const std::vector<SettingInForce>& in_force);

// `--set` and a suite's settings as run.json keeps them: what was asked (with where), the values
// in force, the changes made.
nlohmann::json settings_json(const std::vector<settings::Assignment>& wanted,
                             const FabricSettings& applied);

}  // namespace rocehil::run
