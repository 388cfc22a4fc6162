#pragma once

// The switch settings in force on a --lossless testbed: its switches have no tbf and no ECN rule,
// so the knobs and the switch ports' rates are what each switch's forwarding process was told
// (DIR/switchd/NETNS.json, which it reads again on SIGHUP), and the host links' rate is also each
// host's tbf.

#include <map>
#include <string>

#include "rocehil/testbed/options.hpp"
#include "rocehil/testbed/topology.hpp"

namespace rocehil::testbed {

struct LosslessReadings {
  std::map<std::string, std::string> configs;  // every leaf and spine: its configuration's text
  std::map<std::string, std::string> tc;       // hosts with fabric ports: tc -j qdisc show
};

// The settings in force, by name, in the catalogue's canonical form: switch.uplink_mbps and
// switch.host_mbps ("0" unshaped), and every knob. Throws rocehil::Error (infrastructure) when
// switches or ports disagree (naming both and their files), when a configuration is missing or
// does not parse, lacks a port the topology has, or a host's tbf is one rocehil never writes.
std::map<std::string, std::string> lossless_settings_in_force(const Topology& t,
                                                              const TestbedOptions& options,
                                                              const LosslessReadings& readings);

}  // namespace rocehil::testbed
