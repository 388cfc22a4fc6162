#pragma once

#include <string>
#include <vector>

#include "rocehil/testbed/paths.hpp"
#include "rocehil/testbed/testbed.hpp"
#include "rocehil/testbed/topology.hpp"

namespace rocehil::testbed {

// The spines' remote mirror relays (mirror_relay.hpp) as `up` starts them and `status` finds
// them. `down` stops them with every other process in the testbed's namespaces.

// `rocehil testbed mirror-relay ...` for `session`, which must be remote; `rocehil` is the
// binary that runs `up`.
std::vector<std::string> mirror_relay_argv(const MirrorSession& session, const Topology& t,
                                           const TestbedPaths& paths, const std::string& rocehil);

// Starts one per remote session; each returns once its sockets are open and it runs detached.
// Throws rocehil::Error (the relay's own message) when one cannot start.
void start_mirror_relays(const Topology& t, const TestbedPaths& paths, const std::string& rocehil,
                         const StepReporter& report);

// One per remote session: whether its pid file names a running relay, and its counters.
std::vector<RelayStatus> mirror_relay_status(const Topology& t, const TestbedPaths& paths);

}  // namespace rocehil::testbed
