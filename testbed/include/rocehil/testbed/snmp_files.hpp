#pragma once

#include <string>
#include <vector>

#include "rocehil/testbed/paths.hpp"
#include "rocehil/testbed/snmp_pass.hpp"
#include "rocehil/testbed/topology.hpp"

namespace rocehil::testbed {

// The secrets of the switches' SNMP agents, as DIR/snmp/ keeps them (0600): the v2c community
// the inventory points at, and a v3 user (SHA authentication, AES privacy) for tests of v3.
// NET-SNMP-AGENT-MIB nsCacheTimeout: per cached table, how long snmpd keeps what it read. The
// interface table's is 3 s: counters up to 3 s old, as a real switch's lag its traffic by its
// counter polling interval. The testbed turns it off, so a case's after-poll needs no wait.
inline const Oid ns_cache_timeout_oid = {1, 3, 6, 1, 4, 1, 8072, 1, 5, 3, 1, 2};
// IF-MIB ifAdminStatus: net-snmp on Linux sets a port's IFF_UP through it.
inline const Oid if_admin_status_oid = {1, 3, 6, 1, 2, 1, 2, 2, 1, 7};

struct SnmpSecrets {
  std::string community;
  std::string v3_user;
  std::string v3_auth_key;
  std::string v3_priv_key;
  // May SET ifAdminStatus only, from the management network: lets a user try the SNMP way a
  // link goes down (the testbed's own link events use `ip -n`, as its switches have netns).
  std::string write_community;
};

// snmpd.conf for a switch namespace: its management address only, read-only for the community
// from the management network and for the v3 user with privacy, the write community for IF-MIB
// ifAdminStatus alone, sysName as the switch's name,
// an AgentX master socket for lldpd's LLDP-MIB, and the testbed's counters (snmp_pass.hpp)
// served by `rocehil testbed snmp-counters`, the binary at `rocehil`, as pass_persist handlers.
std::string snmpd_conf(const Namespace& ns, const Topology& t, const TestbedPaths& paths,
                       const SnmpSecrets& secrets, const std::string& rocehil);

// The argv that starts it in its namespace; snmpd daemonizes.
// `snmpset` run inside the namespace that sets the interface table's cache timeout to 0.
std::vector<std::string> cache_off_argv(const Namespace& ns, const SnmpSecrets& secrets);

std::vector<std::string> snmpd_argv(const Namespace& ns, const TestbedPaths& paths);

}  // namespace rocehil::testbed
