#pragma once

#include <string>
#include <vector>

#include "rocehil/testbed/lldp_files.hpp"
#include "rocehil/testbed/paths.hpp"
#include "rocehil/testbed/testbed.hpp"
#include "rocehil/testbed/topology.hpp"

namespace rocehil::testbed {

// The switches' view of the testbed: snmpd in every leaf and spine, lldpd in every host and
// switch. `rocehil` is the binary snmpd runs as its counters handler.
//
// Starts them and waits (15 s at most) until every snmpd answers a GET of sysName and every
// switch has heard the LLDP neighbours the topology gives it; throws rocehil::Error naming the
// namespace and where to look otherwise.
void start_switch_agents(const Topology& t, const TestbedPaths& paths, const std::string& rocehil,
                         const StepReporter& report);

// What the lldpd behind `socket` has heard; false and `detail` set when it cannot be asked (it
// does not run).
bool lldp_neighbors(const std::string& socket, std::vector<LldpNeighbor>& out, std::string& detail);

// What down removes once the daemons are stopped: the pid files in DIR/snmp (the secrets, logs
// and snmpd.conf stay), when `paths.dir` is set, and the testbed's files in
// TestbedPaths::public_run_dir() (sockets, lldpd's lock files and configuration, the FRR
// daemons' socket directories).
void remove_switch_agent_files(const TestbedPaths& paths, std::string_view id);

}  // namespace rocehil::testbed
