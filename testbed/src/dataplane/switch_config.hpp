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
  std::string counters_path;  // the shared counters file (rocehil/testbed/shared_counters.hpp)
  // The CPU the process keeps to (-1: any). A veth hands each frame to the backlog of the CPU
  // that sent it, so a process that moves between CPUs can have two frames of one flow overtake
  // each other; a switch never reorders a flow.
  int cpu = -1;
};

std::string to_json_text(const SwitchConfig& config);
// Throws rocehil::Error (bad input) naming `path`, the field and the fix.
SwitchConfig parse_switch_config(std::string_view text, const std::string& path);

// SONiC's default map with the knob's pairs over it.
lossless::DscpToTc dscp_map(const SwitchKnobs& knobs);

// The profile every port of a switch runs, from the knobs, for a port of `port_mbps` (the lossy
// queues' tail-drop limit scales with the port: 5 ms of its time, as the tbf of the kernel fabric).
// `headroom_bytes`: what an ingress port still takes after XOFF (switch_loop.cpp sizes it).
lossless::PortProfile port_profile(const SwitchKnobs& knobs, int port_mbps,
                                   std::uint32_t headroom_bytes);

}  // namespace rocehil::testbed::dataplane
