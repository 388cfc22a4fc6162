#pragma once

// What one lossless switch's forwarding process is told: its ports, the knobs, where it keeps its
// counters. `up` writes it (DIR/dataplane/<switch>.json); the process reads it at start and again
// on SIGHUP, when `rocehil testbed set switch.*` has changed a knob.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "lossless/qos_profile.hpp"
#include "rocehil/testbed/options.hpp"

namespace rocehil::testbed::dataplane {

struct PortConfig {
  std::string ifname;
  int mbps = 0;  // the port's speed; 0: as fast as the process forwards (unshaped)
};

struct SwitchConfig {
  std::string name;  // "l0", "s1"
  std::uint32_t ecmp_seed = 1;
  std::vector<PortConfig> ports;
  SwitchKnobs knobs{};
  std::string counters_path;  // the shared counters file (queue_counters.hpp)
};

std::string to_json_text(const SwitchConfig& config);
// Throws rocehil::Error (bad input) naming `path`, the field and the fix.
SwitchConfig parse_switch_config(std::string_view text, const std::string& path);

// "3:3,4:4,46:5" over SONiC's default map; throws rocehil::Error (bad input) naming `field` for a
// DSCP outside 0-63, a class outside 0-7, or text not in that form.
lossless::DscpToTc parse_dscp_to_tc(std::string_view text, std::string_view field);

// The profile every port of a switch runs, from the knobs, for a port of `port_mbps` (what scales
// with the port: the lossy queues' tail-drop limit, the headroom).
lossless::PortProfile port_profile(const SwitchKnobs& knobs, int port_mbps);

// Throws rocehil::Error (bad input) naming the setting and its range for the first knob out of it.
void validate_knobs(const SwitchKnobs& knobs);

}  // namespace rocehil::testbed::dataplane
