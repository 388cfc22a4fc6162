#pragma once

#include <nlohmann/json.hpp>

#include "rocehil/testbed/testbed.hpp"

namespace rocehil::testbed {

// `rocehil testbed status --json`: per namespace its name, role, rack, addresses, sshd (hosts,
// capture), snmpd (switches), lldpd with its neighbours (hosts, switches) and interfaces, each
// with the link and far end it connects to; the mirror mode and, for a remote one, each spine's
// relay with its counters; the routing mode and, with --routing bgp, each switch's ASN, BGP
// sessions (peer, state, uptime, prefixes received, BFD state), routes to the racks with their
// next hops, and what keeps it from being converged (schema_version 1).
nlohmann::json status_json(const StatusResult& status);

// `rocehil testbed up --json` and `down --json`.
nlohmann::json up_json(const UpResult& up);
nlohmann::json down_json(const DownResult& down);

}  // namespace rocehil::testbed
