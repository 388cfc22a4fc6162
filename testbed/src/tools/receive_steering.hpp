#pragma once

// Receive packet steering by flow in a testbed namespace. A veth (and loopback) hands each frame
// to the backlog of the CPU that sent it; a sender that moves between CPUs can leave two frames
// of one flow in two backlogs, drained in either order. RPS on every CPU picks a flow's backlog
// by its hash instead, so a flow keeps one and arrives in order.

#include <string>
#include <vector>

namespace rocehil::testbed {

// Writes every CPU into the rps_cpus of `ifnames` in `netns`; nothing on a one-CPU machine.
// Throws rocehil::Error naming the namespace and the interface.
void steer_by_flow(const std::string& netns, const std::vector<std::string>& ifnames);

}  // namespace rocehil::testbed
