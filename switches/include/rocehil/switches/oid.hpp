#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rocehil::switches {

// An SNMP object identifier as its numbers. Debian ships no MIB files (they are not free), so
// rocehil names every object by number, and the names below say which MIB column each one is.
using Oid = std::vector<std::uint32_t>;

std::string to_string(const Oid& oid);  // "1.3.6.1.2.1.1.5.0"
// "1.3.6.1..." or ".1.3.6.1..."; nullopt for anything else.
std::optional<Oid> parse_oid(std::string_view text);
bool starts_with(const Oid& oid, const Oid& prefix);
// The part of `oid` after `prefix` (a table row's index); `oid` must start with `prefix`.
Oid index_after(const Oid& oid, const Oid& prefix);

// The columns rocehil reads. Tables are walked column by column, each row indexed as the MIB says.
namespace mib {
// SNMPv2-MIB system group (scalars, instance .0).
inline const Oid sys_uptime{1, 3, 6, 1, 2, 1, 1, 3};
inline const Oid sys_name{1, 3, 6, 1, 2, 1, 1, 5};
// IF-MIB ifTable (RFC 2863), indexed by ifIndex: 32-bit counters.
inline const Oid if_descr{1, 3, 6, 1, 2, 1, 2, 2, 1, 2};
// ifAdminStatus: up(1), down(2), testing(3); the one column rocehil ever SETs.
inline const Oid if_admin_status{1, 3, 6, 1, 2, 1, 2, 2, 1, 7};
inline const Oid if_in_discards{1, 3, 6, 1, 2, 1, 2, 2, 1, 13};
inline const Oid if_in_errors{1, 3, 6, 1, 2, 1, 2, 2, 1, 14};
inline const Oid if_out_discards{1, 3, 6, 1, 2, 1, 2, 2, 1, 19};
inline const Oid if_out_errors{1, 3, 6, 1, 2, 1, 2, 2, 1, 20};
// IF-MIB ifXTable, indexed by ifIndex: the name, and the 64-bit (HC) counters.
inline const Oid if_name{1, 3, 6, 1, 2, 1, 31, 1, 1, 1, 1};
inline const Oid if_hc_in_octets{1, 3, 6, 1, 2, 1, 31, 1, 1, 1, 6};
inline const Oid if_hc_in_ucast_pkts{1, 3, 6, 1, 2, 1, 31, 1, 1, 1, 7};
inline const Oid if_hc_in_multicast_pkts{1, 3, 6, 1, 2, 1, 31, 1, 1, 1, 8};
inline const Oid if_hc_in_broadcast_pkts{1, 3, 6, 1, 2, 1, 31, 1, 1, 1, 9};
inline const Oid if_hc_out_octets{1, 3, 6, 1, 2, 1, 31, 1, 1, 1, 10};
inline const Oid if_hc_out_ucast_pkts{1, 3, 6, 1, 2, 1, 31, 1, 1, 1, 11};
inline const Oid if_hc_out_multicast_pkts{1, 3, 6, 1, 2, 1, 31, 1, 1, 1, 12};
inline const Oid if_hc_out_broadcast_pkts{1, 3, 6, 1, 2, 1, 31, 1, 1, 1, 13};
inline const Oid if_alias{1, 3, 6, 1, 2, 1, 31, 1, 1, 1, 18};
// CISCO-PFC-EXT-MIB cpfcIfPriorityTable, indexed by ifIndex.priority (0-7), as SONiC serves it
// (sonic-snmpagent ciscoPfcExtMIB.py): Requests are PFC frames the port sent, Indications the
// frames it received.
inline const Oid pfc_priority_requests{1, 3, 6, 1, 4, 1, 9, 9, 813, 1, 2, 1, 2};
inline const Oid pfc_priority_indications{1, 3, 6, 1, 4, 1, 9, 9, 813, 1, 2, 1, 3};
// CISCO-SWITCH-QOS-MIB csqIfQosGroupStatsValue, indexed by ifIndex.direction.queue.statType as
// SONiC serves it (ciscoSwitchQosMIB.py): direction 2 = egress; queues numbered from 1 (SONiC and
// the testbed's lossless switches serve 8, queue N+1 for traffic class N; the testbed's tbf one);
// statType 1 and 3 = unicast and multicast packets sent, 5 and 7 = packets dropped.
inline const Oid queue_stats_value{1, 3, 6, 1, 4, 1, 9, 9, 580, 1, 5, 5, 1, 4};
inline constexpr std::uint32_t queue_egress = 2;
inline constexpr std::uint32_t queue_stat_ucast_sent_pkts = 1;
inline constexpr std::uint32_t queue_stat_mcast_sent_pkts = 3;
inline constexpr std::uint32_t queue_stat_ucast_dropped_pkts = 5;
inline constexpr std::uint32_t queue_stat_mcast_dropped_pkts = 7;
// LLDP-MIB (IEEE 802.1AB-2005): the local ports, indexed by lldpLocPortNum, and the neighbours,
// indexed by lldpRemTimeMark.lldpRemLocalPortNum.lldpRemIndex.
inline const Oid lldp_loc_port_id{1, 0, 8802, 1, 1, 2, 1, 3, 7, 1, 3};
inline const Oid lldp_loc_port_desc{1, 0, 8802, 1, 1, 2, 1, 3, 7, 1, 4};
inline const Oid lldp_rem_port_id_subtype{1, 0, 8802, 1, 1, 2, 1, 4, 1, 1, 6};
inline const Oid lldp_rem_port_id{1, 0, 8802, 1, 1, 2, 1, 4, 1, 1, 7};
inline const Oid lldp_rem_port_desc{1, 0, 8802, 1, 1, 2, 1, 4, 1, 1, 8};
inline const Oid lldp_rem_sys_name{1, 0, 8802, 1, 1, 2, 1, 4, 1, 1, 9};
}  // namespace mib

}  // namespace rocehil::switches
