#include <fmt/format.h>
#include <net/if.h>

#include <filesystem>
#include <map>

#include "rocehil/common/error.hpp"
#include "rocehil/testbed/switch_counters.hpp"
#include "tools/live.hpp"
#include "tools/process.hpp"

namespace rocehil::testbed {

namespace {

// A lossless switch's queues, from its forwarding process's counters: no process to start, so a
// walk's reading costs a few microseconds. An ifIndex the process did not record is the
// kernel's here (the handler runs in the switch's namespace).
std::vector<PortCounters> read_lossless_queues(const std::string& path) {
  const auto snapshots = dataplane::read_shared_counters(path);
  std::map<std::string, int> ifindexes;
  for (const auto& p : snapshots)
    if (p.ifindex == 0) ifindexes[p.ifname] = static_cast<int>(::if_nametoindex(p.ifname.c_str()));
  return lossless_ports(snapshots, ifindexes);
}

}  // namespace

std::vector<PortCounters> read_port_counters(std::string_view netns, CounterMib mib) {
  if (mib == CounterMib::qos)
    // A --lossless testbed's switch has no tbf: its queues are the forwarding process's.
    if (const std::string shared = dataplane::shared_counters_path(netns);
        std::filesystem::exists(shared))
      return read_lossless_queues(shared);
  const std::string table = pfc_table_name(id_of_netns(netns));
  const std::vector<std::string> list_counters = {"nft",   "-j",     "list", "counters",
                                                  "table", "netdev", table};
  // The fabric ports are the ones with PFC counters, whichever MIB is read for.
  const auto counters =
      parse_nft_counters(command_json("reading the PFC counters", list_counters), table);
  const auto links = command_json("reading the interfaces", {"ip", "-j", "link", "show"});
  if (mib == CounterMib::qos) {
    const auto queues =
        parse_tbf_stats(command_json("reading the queues", {"tc", "-s", "-j", "qdisc", "show"}));
    return assemble_ports(parse_ifindexes(links), counters, queues, {}, {});
  }
  // Each fabric port's veth peer, in the namespace at the other end of its wire: found once, as
  // the testbed's cables do not move while its agents run.
  static std::map<std::string, VethPeer> peers;
  if (peers.empty()) {
    const auto names = parse_netns_ids(
        command_json("reading the namespace ids", {"ip", "-j", "netns", "list-id"}));
    for (const auto& [ifname, index] : parse_peer_indexes(links)) {
      const auto ns = names.find(index.nsid);
      if (ns == names.end() || !ns->second.starts_with(netns_prefix(id_of_netns(netns)))) continue;
      if (!counters.contains(pfc_counter_name(ifname, PfcDirection::sent, 0))) continue;
      const auto far_links = command_json("reading the peer's interfaces",
                                          {"ip", "-n", ns->second, "-j", "link", "show"});
      for (const auto& [far_name, far_index] : parse_ifindexes(far_links))
        if (far_index == index.ifindex) peers[ifname] = {ns->second, far_name};
    }
  }
  std::map<std::string, std::map<std::string, std::uint64_t>> peer_counters;
  for (const auto& [ifname, peer] : peers)
    if (!peer_counters.contains(peer.netns))
      peer_counters[peer.netns] = parse_nft_counters(
          command_json_in("reading the PFC counters", peer.netns, list_counters), table);
  return assemble_ports(parse_ifindexes(links), counters, {}, peers, peer_counters);
}

}  // namespace rocehil::testbed
