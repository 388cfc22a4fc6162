#pragma once

// Starting the forwarding process of every leaf and spine of a --lossless testbed.

#include <string>

#include "dataplane/switch_config.hpp"
#include "rocehil/testbed/paths.hpp"
#include "rocehil/testbed/testbed.hpp"
#include "rocehil/testbed/topology.hpp"

namespace rocehil::testbed::dataplane {

// The configuration `up` writes for switch `ns`: its fabric ports at their rates, the knobs.
SwitchConfig switch_config(const Namespace& ns, const TestbedOptions& options,
                           const std::string& counters_path);

// Writes each switch's configuration, starts `rocehil testbed switchd` in each and waits (10 s at
// most) until each has opened its ports; throws rocehil::Error naming the switch and its log.
void start_switchds(const Topology& t, const TestbedOptions& options, const TestbedPaths& paths,
                    const std::string& rocehil, const StepReporter& report);

// SIGHUP to every running switchd, after their configurations were rewritten with `options`'
// knobs (a `testbed set switch.*`); throws rocehil::Error naming a switch whose process is gone.
void reload_switchds(const Topology& t, const TestbedOptions& options, const TestbedPaths& paths);

}  // namespace rocehil::testbed::dataplane
