#pragma once

#include <string>

#include "rocehil/testbed/paths.hpp"
#include "rocehil/testbed/snmp_files.hpp"

namespace rocehil::testbed {

// DIR/snmp/community, v3_user, v3_auth_key and v3_priv_key: read when they are there, made
// (random, 0600) when not, so an inventory or a user's command line that points at them stays
// valid across down/up. Throws rocehil::Error when they cannot be written.
SnmpSecrets ensure_snmp_secrets(const TestbedPaths& paths);

// The community in DIR/snmp/community, or empty when there is none.
std::string read_snmp_community(const TestbedPaths& paths);

}  // namespace rocehil::testbed
