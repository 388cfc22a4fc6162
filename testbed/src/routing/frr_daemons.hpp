#pragma once

#include <chrono>

#include "rocehil/testbed/options.hpp"
#include "rocehil/testbed/paths.hpp"
#include "rocehil/testbed/routing_status.hpp"
#include "rocehil/testbed/testbed.hpp"
#include "rocehil/testbed/topology.hpp"

namespace rocehil::testbed {

// The FRR daemons of --routing bgp on a running fabric (frr_files.hpp says what they are told).

// Throws rocehil::Error (bad input) naming Debian's frr package when a daemon or vtysh is
// missing.
void require_frr();

// Writes every switch's configuration files and starts its zebra, bfdd and bgpd in its
// namespace. Throws rocehil::Error (infrastructure) naming the daemon and its log when one does
// not start.
void start_routing(const Topology& t, const TestbedOptions& options, const TestbedPaths& paths,
                   const StepReporter& report);

// Waits until every switch is converged (routing_problems() empty for each): every session
// Established, every rack reached over every path. Throws rocehil::Error (infrastructure) after
// `limit`, naming each switch's problems and its logs.
void wait_for_routing(const Topology& t, const TestbedPaths& paths, std::chrono::seconds limit,
                      const StepReporter& report);

// Switch `ns`'s sessions and routes, read with vtysh; `problem` set when vtysh cannot be asked
// (its daemons do not run).
SwitchRouting read_routing(const Namespace& ns, const Topology& t);

}  // namespace rocehil::testbed
