#pragma once

// Starting the NIC process of every --vm guest on a --lossless testbed, before its QEMU, and
// telling them a changed host rate or PFC priority list (`testbed set`).

#include <string>

#include "guest_nic/nic_config.hpp"
#include "rocehil/testbed/paths.hpp"
#include "rocehil/testbed/testbed.hpp"
#include "rocehil/testbed/topology.hpp"

namespace rocehil::testbed::guest_nic {

// The configuration `up` writes for host `ns`: its fabric veth at its rate, the PFC priorities
// the switches have (a guest's NIC is configured as its fabric is: aligned).
NicConfig nic_config(const Namespace& ns, const TestbedOptions& options,
                     const std::string& counters_path);

// Writes each host's configuration, starts `rocehil testbed guest-nic` in each host namespace and
// waits (10 s at most) until each listens for its QEMU; throws rocehil::Error naming the host and
// its log.
void start_guest_nics(const Topology& t, const TestbedOptions& options, const TestbedPaths& paths,
                      const std::string& rocehil, const StepReporter& report);

// Rewrites each configuration with `options` and sends SIGHUP; throws rocehil::Error naming a
// host whose NIC process is gone.
void reload_guest_nics(const Topology& t, const TestbedOptions& options, const TestbedPaths& paths);

}  // namespace rocehil::testbed::guest_nic
