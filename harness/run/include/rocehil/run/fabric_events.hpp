#pragma once

// The run's means for its tests' events (fabric_actions.hpp), journaled like a setting: a link or
// NIC is written to the fabric's journal on this machine (DIR/FABRIC/@down.json, settings/
// journal.hpp, owned by this process) before it is taken down, and its entry cleared once it is up
// again. A controller killed with a link down leaves the journal; `rocehil settings restore` and
// the next run find it (restore_left) and bring what it lists up, as they put settings back.
//
// On a testbed a link is taken down at both ends in its namespaces (FabricLinkAccess::set_link);
// elsewhere at the first switch end that can: its namespace (`ip -n`), its own link_down/link_up
// over ssh, or, where it has neither and its snmp settings give a write credential, an SNMP SET
// of IF-MIB ifAdminStatus on the port, read back (switches/port_admin.hpp; docs/inventory.md). A
// NIC is its host's netdevs, `ip link set dev NETDEV down|up` as root over the host's launcher
// (ssh): no agent and no protocol change, and the host's agent may be busy with the case's traffic.

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "rocehil/inventory/inventory.hpp"
#include "rocehil/remote/host_ssh.hpp"
#include "rocehil/run/fabric_actions.hpp"
#include "rocehil/run/fabric_settings.hpp"
#include "rocehil/settings/journal_owner.hpp"

namespace rocehil::run {

// The journal's name in the fabric's directory: '@' is in no host's name, so no host's journal
// is ever taken for it (settings::is_journal_of).
inline constexpr std::string_view down_journal_name = "@down";

// The words run for a switch port's link_down / link_up: `text` with {port} replaced by the
// port, shell-quoted (one word, whatever it holds).
std::string port_command(const std::string& text, const std::string& port);

class FabricEvents final : public FabricActions {
 public:
  // `fabric`: fabric_id of the inventory; `run`: the run recorded in the journal. Throws
  // rocehil::Error when this process cannot say who it is (settings::this_process).
  FabricEvents(const inventory::Inventory& inventory, std::string fabric,
               std::optional<FabricLinkAccess> links, const remote::SshMultiplex* multiplex,
               std::string run, std::string journal_dir = {});

  std::string link(const std::string& link, bool up) override;
  std::string nic(const std::string& host, bool up) override;
  std::string command(const suites::Event& event) override;
  std::vector<BroughtUp> bring_up_all() override;

  // What a journal left by another run (gone, or any with `force`) lists, brought up, its entries
  // cleared as each comes up. A journal of a live run is left alone and returned in `in_use`.
  // Throws rocehil::Error naming what could not be brought up (its entry stays).
  LeftJournals restore_left(bool force = false);

  const std::string& journal_path() const noexcept { return journal_; }

 private:
  // How a link goes down, for its journal entry: the testbed, "ip -n NS", "link_down" or the
  // SNMP SET.
  std::string way_of(const std::string& link) const;
  // Takes `name` (a link, or a host's NICs) up or down; returns what it ran.
  std::string take(const std::string& kind, const std::string& name, bool up);
  void journal_down(const std::string& kind, const std::string& name, const std::string& where);
  void journal_up(const std::string& kind, const std::string& name);
  std::string run_on_host(const inventory::Host& host, const std::vector<std::string>& argv,
                          const std::string& what);
  std::string run_on_switch(const inventory::Switch& s, const std::string& text,
                            const std::string& what);

  const inventory::Inventory& inventory_;
  std::string fabric_;
  std::optional<FabricLinkAccess> links_;
  const remote::SshMultiplex* multiplex_;
  std::string run_;
  std::string journal_;
  settings::Machine here_;
  settings::JournalOwner owner_;
  std::vector<std::pair<std::string, std::string>> down_;  // (kind, name), oldest first
};

}  // namespace rocehil::run
