#pragma once

// Lines that say what happened to fabric settings, shared by run, bisect, selftest, settings and
// inventory check: what a journal left behind put back, what is in force, what was restored.

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "rocehil/run/fabric_settings.hpp"

namespace rocehil::cli {

// "settings left changed by run R on h1 put back: roce_rp.rpg_gd 9 -> 11 (eth1)"
std::string left_restored_line(const run::SettingsRestored& r);
// "settings journal on h1 in use by run R (pid P on ctl) since T: left alone, not put back"
std::string in_use_line(const run::JournalInUse& u);
// The same for --json (settings restore, inventory check): host, run, since, pid, machine, alive.
nlohmann::ordered_json in_use_json(const run::JournalInUse& u);
// "settings in force: h1 eth1 roce_rp.rpg_gd=9, switches switch.ecn_mark_mbps=150"
std::string in_force_line(const std::vector<run::SettingInForce>& in_force);
// "settings put back and read back: 3 change(s) (h1, h2, testbed-tb1)"
std::string restored_line(const std::vector<run::SettingsRestored>& restored);

}  // namespace rocehil::cli
