#pragma once

// The congestion settings the soft provider takes, by the names ConnectX's sysfs gives them
// (settings/ catalogue: "roce_rp.rpg_time_reset", "roce_np.cnp_dscp", ...), so a suite rehearsed
// on the testbed sets what it will set on a real NIC. Traffic knows only names and integers: who
// decides the values (the agent, from --set or a suite) is not its business.

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace rocehil::traffic {

struct SoftSetting {
  std::string name;
  std::int64_t value = 0;  // a list of priorities (roce_rp.enable): bit P is priority P
};

// Whether `name` is a list of priorities, carried as a bitmask.
bool soft_setting_is_priorities(std::string_view name);

// Every name the soft provider takes with the value it uses when none is given: its own
// defaults, which are not always ConnectX's (dcqcn.hpp says why for each).
std::vector<SoftSetting> soft_setting_defaults();

// Throws rocehil::Error (bad input) naming the setting when `settings` holds a name the soft
// provider does not take, a value out of the field's range, or values that together cannot drive
// DCQCN; nothing else is checked by make_provider("soft", ...) before it starts.
void check_soft_settings(std::span<const SoftSetting> settings);

}  // namespace rocehil::traffic
