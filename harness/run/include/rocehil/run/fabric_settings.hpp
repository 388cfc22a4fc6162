#pragma once

// The controller's side of fabric settings: a run's (or a bisection step's) settings applied to
// every host through its agent and to the testbed's switches, each read back; every change put
// back at the end; and journals left by a controller that was killed found and put back first.
// Journals are the fabric's (fabric_id) and this process's: another command leaves them alone
// while this run lives, and the run reads its settings back to notice one changed under it.

#include <chrono>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "rocehil/agent/protocol.hpp"
#include "rocehil/common/error.hpp"
#include "rocehil/inventory/inventory.hpp"
#include "rocehil/remote/dialed_agents.hpp"
#include "rocehil/remote/host_ssh.hpp"
#include "rocehil/settings/assignment.hpp"
#include "rocehil/settings/journal_owner.hpp"
#include "rocehil/settings/journaled_changes.hpp"

namespace rocehil::run {

// What names a fabric's journals (their directory, settings/journal.hpp), so that two fabrics
// whose hosts share names and addresses (two testbeds on one machine) never touch each other's:
// the inventory's `name:` (a testbed's is "testbed-ID"), else "inventory-" and a hash of the
// inventory file's absolute path. Letters, digits, '.', '_' and '-' only.
std::string fabric_id(const inventory::Inventory& inventory);

// The switches' settings (catalogue scope fabric_link): the testbed's, through functions the
// command line gives (run does not build fabrics). Unset: the inventory is not a testbed's.
struct FabricLinkAccess {
  std::string name;  // for messages and journals: "testbed tb1"
  std::function<std::map<std::string, std::string>()> read;
  // Writes one setting, `value` canonical (catalogue.hpp): "300", "3,4", "3:3,46:5".
  std::function<void(std::string_view setting, const std::string& value)> write;
  // The order to write `wanted` (name, canonical value) in, one at a time, so that the switches
  // take every step (a lossless switch's WRED kmin never above its kmax); putting back goes in
  // reverse. Unset: as given.
  std::function<std::vector<std::pair<std::string, std::string>>(
      std::vector<std::pair<std::string, std::string>> wanted)>
      order = {};
  // A fabric link taken down or brought up at both ends (a suite's link events); unset: the
  // testbed cannot (the inventory's switches' link_down/link_up are used instead).
  std::function<void(std::string_view link, bool up)> set_link = {};
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

// A journal left alone: the run holding it is alive, or ran on a machine where neither the host
// nor this one can judge it (put back with force once that run is known to be gone).
struct JournalInUse {
  std::string host;  // the inventory's host, or the switches' name ("testbed tb1")
  std::string run, since;
  settings::JournalOwner owner;
  bool alive = false;  // false: cannot be told from here
};

struct LeftJournals {
  std::vector<SettingsRestored> restored;
  std::vector<JournalInUse> in_use;
};

// A setting the run changed that no longer reads as the run set it: changed under the run.
struct SettingDrift {
  std::string host;  // "" for the fabric's links
  std::string netdev, name;
  std::string set;    // the value in force after the run set it
  std::string found;  // what reads now ("" when the NIC no longer shows it)
  bool operator==(const SettingDrift&) const = default;
};

class FabricSettings {
 public:
  // `fabric`: fabric_id of the hosts' inventory. Throws rocehil::Error when this process cannot
  // say who it is (settings::this_process).
  FabricSettings(std::vector<SettingsHost> hosts, std::string fabric,
                 std::optional<FabricLinkAccess> links, const remote::SshMultiplex* multiplex,
                 std::chrono::seconds timeout, std::string journal_dir = {},
                 std::size_t fanout = 32);
  ~FabricSettings();
  FabricSettings(const FabricSettings&) = delete;
  FabricSettings& operator=(const FabricSettings&) = delete;

  // Asks the run's agents that dialed in (one session per host and request) instead of starting
  // one per host and request. Each of them then also puts back what it applied should the
  // controller go before it restores (agent_transport.hpp).
  void ask_through(remote::DialedAgents& dialed) { dialed_ = &dialed; }

  // Puts back what journals left on the hosts (and for the switches) say, when the run holding
  // each is known to be gone (or `force`): judged on the host, else here when that run's
  // controller ran on this machine. A journal of a live run (or one that cannot be judged) is
  // left alone and returned in `in_use`. Throws rocehil::Error naming the host when one cannot be
  // put back. `journal_on`, when given, says which hosts have one (the preflight lists them):
  // only those are asked.
  LeftJournals restore_left(const std::function<bool(const inventory::Host&)>& journal_on = {},
                            bool force = false);

  // Every host and the switches checked able to take `wanted` (nothing changed otherwise), then
  // changed, journaled on each host before each change and read back. On any failure what was
  // changed anywhere is put back, and the error (naming host, setting, wanted and found) thrown.
  void apply(const std::vector<settings::Assignment>& wanted, const std::string& run);

  // Puts back everything apply() changed, reading each value back. Safe to call twice; tries
  // every host before throwing for the first that failed.
  std::vector<SettingsRestored> restore();

  // The settings apply() left in force, read again: those that no longer read as set (someone
  // changed them under the run). Empty when nothing was set. Throws rocehil::Error when a host
  // cannot be read.
  std::vector<SettingDrift> changed_under_run();

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
  LeftJournals restore_links(bool force);
  settings::JournaledChanges link_changes(const std::string& fabric) const;

  std::vector<SettingsHost> hosts_;
  std::string fabric_;
  settings::Machine here_;
  settings::JournalOwner owner_;  // this process: the owner of the journals the run writes
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

// "setting roce_np.min_time_between_cnps on h1 eth1 read 2, not 7 as the run set it (and 1 more)"
std::string drift_text(const std::vector<SettingDrift>& drift);

// `--set` and a suite's settings as run.json keeps them: what was asked (with where), the values
// in force, the changes made.
nlohmann::json settings_json(const std::vector<settings::Assignment>& wanted,
                             const FabricSettings& applied);

}  // namespace rocehil::run
