#pragma once

// The agent's side of `settings`: a host's NIC settings applied with a journal and read back,
// restored from the journal, or read; with the soft provider, the provider's own files for its
// address, laid out as a NIC's, which the provider reads at setup.

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "rocehil/agent/protocol.hpp"
#include "rocehil/agent/soft_nic.hpp"
#include "rocehil/settings/journal.hpp"
#include "rocehil/settings/nic_files.hpp"
#include "rocehil/traffic/soft_settings.hpp"

namespace rocehil::agent {

// Where settings live on this host. Tests point them at directories of their own.
struct SettingsPlaces {
  std::string nic_root = "/";                                  // verbs: the NICs' sysfs and debugfs
  std::string soft_dir = std::string(settings::soft_nic_dir);  // soft: SOFT_DIR/ADDRESS
  std::string journal_dir = std::string(settings::default_journal_dir);
  // The netdev holding an address ("" when none does).
  std::function<std::string(std::string_view)> netdev_of;
};
SettingsPlaces host_settings_places();

// Answers one settings request. Throws rocehil::Error naming the host (and setting) when it
// cannot: an address no interface holds, a NIC without the setting (before anything changes),
// a write refused or read back different (what was changed is put back first).
SettingsReply handle_settings(const SettingsRequest& request, const SettingsPlaces& places);

// The soft provider's settings for `address` as its files hold them (empty when none were ever
// set there), for ProviderOptions::soft_settings.
std::vector<traffic::SoftSetting> soft_settings_for(std::string_view address,
                                                    const SettingsPlaces& places);

// The soft provider's `pfc` and `trust` for `address` (its defaults where none was set), for
// ProviderOptions::pfc_priorities and trust_pcp.
SoftQos soft_qos_for(std::string_view address, const SettingsPlaces& places);

}  // namespace rocehil::agent
