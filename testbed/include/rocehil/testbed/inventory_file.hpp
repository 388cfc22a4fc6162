#pragma once

#include <string>

#include "rocehil/testbed/options.hpp"
#include "rocehil/testbed/ssh_files.hpp"
#include "rocehil/testbed/topology.hpp"

namespace rocehil::testbed {

// DIR/inventory.yaml: the testbed described as a site describes its fabric — hosts with their
// management (ssh) address and RoCE NIC, racks, switches with their management address and SNMP
// settings (the community in DIR/snmp/community), links with speeds, and capture points
// naming the spine links each mirror interface copies (for a remote mirror, the capture
// namespace's management interface and `remote: {session, source}`). `rocehil run --inventory`
// reads it.
std::string inventory_yaml(const Topology& t, const TestbedOptions& options,
                           const TestbedPaths& paths);

}  // namespace rocehil::testbed
