#pragma once

#include <nlohmann/json.hpp>

#include "rocehil/testbed/testbed.hpp"

namespace rocehil::testbed {

// `rocehil testbed status --json`: per namespace its name, role, rack, addresses, sshd (hosts,
// capture), snmpd (switches), lldpd with its neighbours (hosts, switches) and interfaces, each
// with the link and far end it connects to; the mirror mode and, for a remote one, each spine's
// relay with its counters; the routing mode and, with --routing bgp, each switch's ASN, BGP
// sessions (peer, state, uptime, prefixes received, BFD state), routes to the racks with their
// next hops, and what keeps it from being converged; `lossless` and, for a --lossless testbed,
// each switch's `dataplane`: its counters file, `totals` over its ports (forwarded, pfc_sent,
// pfc_received, ecn_marked, queue_drops, forwarding_drops, lossless_drops, storms_detected,
// storm_drops) and every port (name, ifindex, rx_packets, rx_bytes, forwarded, no_route,
// unresolved, ttl_expired, 8 `queues` by class: packets, bytes, dropped, dropped_bytes,
// ecn_marked, depth_bytes, peak_depth_bytes; 8 `priorities`: pfc_sent, pfc_received, xon_sent,
// xon_received, paused_ns, ingress_bytes, peak_ingress_bytes, lossless_drops, storms_detected,
// storms_restored, storm_drops), or, when the file cannot be read, `totals` and `ports` null
// and `problem` saying why (schema_version 1).
nlohmann::json status_json(const StatusResult& status);

// `rocehil testbed up --json` and `down --json`.
nlohmann::json up_json(const UpResult& up);
nlohmann::json down_json(const DownResult& down);

}  // namespace rocehil::testbed
