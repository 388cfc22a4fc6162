#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "rocehil/testbed/shared_counters.hpp"
#include "rocehil/testbed/topology.hpp"

namespace rocehil::testbed {

// The counters a switch keeps that Linux does not keep for a veth: PFC frames per port and
// priority, counted by nftables, and the egress queues of each port: a shaped port's tbf, or the
// 8 queues a lossless switch's forwarding process counts (shared_counters.hpp). The testbed's snmpd
// serves them under the MIBs a SONiC switch serves (snmp_pass.hpp).

// `nft -f` for a leaf, spine or host: a netdev table counting the PFC frames (EtherType 0x8808,
// opcode 0x0101) each fabric port sends (egress hook), per priority whose class-enable bit is
// set: a frame pausing several priorities counts once for each. Empty for the capture namespace.
//
// What a port receives is what its veth peer sent (a veth is a wire), so it is read from the
// peer's counters, not from an ingress hook: with a netdev ingress hook the kernel hands a frame
// to lldpd's packet socket before the hook and then, finding no protocol for it, counts it as a
// receive drop, so every LLDP frame would read as a switch discard (ifInDiscards).
std::string pfc_nft_ruleset(const Namespace& ns, const Topology& t);

// "rocehil_<id>_pfc": the table, in the switch's namespace.
std::string pfc_table_name(std::string_view id);

enum class PfcDirection { received, sent };

// The nftables counter of a port, direction and priority: "rx_t1_h1_p3" for t1-h1 (counter
// names are identifiers, interface names carry '-').
std::string pfc_counter_name(std::string_view ifname, PfcDirection direction, int priority);

// An egress queue of a port: the one a tbf shaper makes (a shaped port of the namespace
// fabric), or one of the 8 traffic classes of a lossless switch's port (`testbed up --lossless`).
struct QueueCounters {
  std::uint64_t packets = 0;  // sent
  std::uint64_t bytes = 0;    // sent
  std::uint64_t drops = 0;    // packets dropped: the queue's tail drops (and, lossless, WRED's)
  std::optional<std::uint64_t> drop_bytes;  // the lossless switch's queues; a tbf does not count
};

struct PortCounters {
  std::string name;
  int ifindex = 0;  // the kernel's, which snmpd's IF-MIB uses as ifIndex
  std::array<std::uint64_t, 8> pfc_received{};
  std::array<std::uint64_t, 8> pfc_sent{};
  // Egress queues, queue 1 first: the tbf's one (shaped ports), or the lossless switch's 8
  // (queue n + 1 is traffic class n). Empty for an unshaped port of the namespace fabric.
  std::vector<QueueCounters> queues;
};

// `nft -j list counters ...`: packets by counter name, of `table` (netdev family) only.
std::map<std::string, std::uint64_t> parse_nft_counters(const nlohmann::json& nft,
                                                        std::string_view table);

// `tc -s -j qdisc show`: the tbf root qdisc's statistics by device.
std::map<std::string, QueueCounters> parse_tbf_stats(const nlohmann::json& tc);

// `ip -j link show`: ifindex by interface name.
std::map<std::string, int> parse_ifindexes(const nlohmann::json& links);

// A veth's other end: the namespace it is in (by `ip -j netns list-id`'s names) and its name.
struct VethPeer {
  std::string netns;
  std::string ifname;
};
// `ip -j link show` of this namespace: by interface name, each veth's peer ifindex and the
// peer namespace's id (link_index, link_netnsid); `ip -j netns list-id`: names by id.
struct PeerIndex {
  int nsid = -1;
  int ifindex = 0;
};
std::map<std::string, PeerIndex> parse_peer_indexes(const nlohmann::json& links);
std::map<int, std::string> parse_netns_ids(const nlohmann::json& ids);

// The fabric ports, in ifindex order: the interfaces with PFC counters in the table; each with
// its queue when it has a tbf, and what it received: the PFC frames its peer sent, by the peer's
// counters (`peer_counters`, by the peer's namespace).
std::vector<PortCounters> assemble_ports(
    const std::map<std::string, int>& ifindexes,
    const std::map<std::string, std::uint64_t>& counters,
    const std::map<std::string, QueueCounters>& queues,
    const std::map<std::string, VethPeer>& peers,
    const std::map<std::string, std::map<std::string, std::uint64_t>>& peer_counters);

// The ports of a lossless switch, from its forwarding process's counters: each with its 8
// queues and nothing else; ifIndex as the snapshot carries it, or from `ifindexes` (by name)
// where it is 0. Ports with no ifIndex either way are left out: they have no row to be served
// in. In ifindex order.
std::vector<PortCounters> lossless_ports(const std::vector<dataplane::PortSnapshot>& ports,
                                         const std::map<std::string, int>& ifindexes);

// "rocehil-<id>-<name>" -> "<id>"; throws rocehil::Error (bad input) for any other name.
std::string id_of_netns(std::string_view netns);

// The two MIBs a switch's counters are served under, one handler each (snmp_pass.hpp). Each
// handler's reading takes only what its MIB serves, as snmpd waits for each reading (a process
// each, and the PFC frames received one more per neighbour's namespace) while the poll that
// asked waits for snmpd.
enum class CounterMib {
  // CISCO-PFC-EXT-MIB: cpfcIfTable (1.3.6.1.4.1.9.9.813.1.1.1.C.ifIndex: 1 requests = PFC
  // frames sent, 2 indications = received, summed over priorities) and cpfcIfPriorityTable
  // (813.1.2.1.C.ifIndex.priority: 2 requests, 3 indications, priorities 0-7).
  pfc,
  // CISCO-SWITCH-QOS-MIB csqIfQosGroupStatsTable, csqIfQosGroupStatsValue
  // (1.3.6.1.4.1.9.9.580.1.5.5.1.4.ifIndex.direction.queue.type): egress (2); queue 1 (the tbf)
  // or, on a lossless switch, queues 1-8 (traffic classes 0-7); types 1 unicast packets sent,
  // 2 unicast bytes sent, 5 unicast packets dropped and, lossless, 6 unicast bytes dropped.
  qos,
};

// Reads them live in the current network namespace (the counters handler runs inside the
// switch's, started by its snmpd) for the testbed of namespace `netns` (rocehil-<id>-<name>):
// every fabric port, with its PFC counters (`pfc`) or its queues (`qos`) and nothing else. The
// queues are the lossless switch's when its counters file is there
// (dataplane::shared_counters_path), else the tbfs'. Throws rocehil::Error when nft, tc or ip
// fails, or the counters file cannot be read.
std::vector<PortCounters> read_port_counters(std::string_view netns, CounterMib mib);

}  // namespace rocehil::testbed
