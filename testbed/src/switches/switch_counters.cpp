#include "rocehil/testbed/switch_counters.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "rocehil/common/error.hpp"

namespace rocehil::testbed {

std::string id_of_netns(std::string_view netns) {
  const std::string_view prefix = "rocehil-";
  const auto dash = netns.find('-', prefix.size());
  if (!netns.starts_with(prefix) || dash == std::string_view::npos || dash == prefix.size())
    throw input_error(fmt::format(
        "--netns '{}' is not a testbed namespace (rocehil-ID-NAME, as 'ip netns list' shows)",
        netns));
  return std::string(netns.substr(prefix.size(), dash - prefix.size()));
}

std::string pfc_table_name(std::string_view id) {
  return fmt::format("rocehil_{}_pfc", id);
}

std::string pfc_counter_name(std::string_view ifname, PfcDirection direction, int priority) {
  std::string name(ifname);
  std::replace(name.begin(), name.end(), '-', '_');
  return fmt::format("{}_{}_p{}", direction == PfcDirection::received ? "rx" : "tx", name,
                     priority);
}

std::string pfc_nft_ruleset(const Namespace& ns, const Topology& t) {
  if (!is_switch(ns) && ns.role != Role::host) return {};
  const auto ports = fabric_interfaces(ns);
  if (ports.empty()) return {};
  std::string out = fmt::format("table netdev {} {{\n", pfc_table_name(t.id));
  for (const Interface* i : ports)
    for (int p = 0; p < 8; ++p)
      out +=
          fmt::format("  counter {} {{\n  }}\n", pfc_counter_name(i->name, PfcDirection::sent, p));
  for (const Interface* i : ports) {
    std::string chain_name(i->name);
    std::replace(chain_name.begin(), chain_name.end(), '-', '_');
    // Priority -500: before anything else on the hook, so every frame is counted.
    out += fmt::format(
        "  chain out_{} {{\n    type filter hook egress device \"{}\" priority -500; policy "
        "accept;\n",
        chain_name, i->name);
    // The class-enable vector is bytes 16-17 of the frame; priority p is its bit p, bit
    // (143 - p) counted from the frame's first bit.
    for (int p = 0; p < 8; ++p)
      out += fmt::format("    ether type 0x8808 @ll,112,16 0x0101 @ll,{},1 1 counter name \"{}\"\n",
                         143 - p, pfc_counter_name(i->name, PfcDirection::sent, p));
    out += "  }\n";
  }
  out += "}\n";
  return out;
}

std::map<std::string, std::uint64_t> parse_nft_counters(const nlohmann::json& nft,
                                                        std::string_view table) {
  std::map<std::string, std::uint64_t> out;
  if (!nft.is_object()) return out;
  for (const auto& entry : nft.value("nftables", nlohmann::json::array())) {
    if (!entry.is_object() || !entry.contains("counter")) continue;
    const auto& c = entry["counter"];
    if (c.value("family", "") != "netdev" || c.value("table", "") != table) continue;
    out[c.value("name", "")] = c.value("packets", std::uint64_t{0});
  }
  return out;
}

std::map<std::string, QueueCounters> parse_tbf_stats(const nlohmann::json& tc) {
  std::map<std::string, QueueCounters> out;
  if (!tc.is_array()) return out;
  for (const auto& q : tc) {
    if (!q.is_object() || q.value("kind", "") != "tbf" || !q.value("root", false)) continue;
    out[q.value("dev", "")] = {q.value("packets", std::uint64_t{0}),
                               q.value("bytes", std::uint64_t{0}),
                               q.value("drops", std::uint64_t{0}), std::nullopt};
  }
  return out;
}

std::map<std::string, int> parse_ifindexes(const nlohmann::json& links) {
  std::map<std::string, int> out;
  if (!links.is_array()) return out;
  for (const auto& l : links)
    if (l.is_object() && l.contains("ifname")) out[l.value("ifname", "")] = l.value("ifindex", 0);
  return out;
}

std::map<std::string, PeerIndex> parse_peer_indexes(const nlohmann::json& links) {
  std::map<std::string, PeerIndex> out;
  if (!links.is_array()) return out;
  for (const auto& l : links)
    if (l.is_object() && l.contains("ifname") && l.contains("link_netnsid") &&
        l.contains("link_index"))
      out[l.value("ifname", "")] = {l.value("link_netnsid", -1), l.value("link_index", 0)};
  return out;
}

std::map<int, std::string> parse_netns_ids(const nlohmann::json& ids) {
  std::map<int, std::string> out;
  if (!ids.is_array()) return out;
  for (const auto& i : ids)
    if (i.is_object() && i.contains("nsid") && i.contains("name"))
      out[i.value("nsid", -1)] = i.value("name", "");
  return out;
}

std::vector<PortCounters> assemble_ports(
    const std::map<std::string, int>& ifindexes,
    const std::map<std::string, std::uint64_t>& counters,
    const std::map<std::string, QueueCounters>& queues,
    const std::map<std::string, VethPeer>& peers,
    const std::map<std::string, std::map<std::string, std::uint64_t>>& peer_counters) {
  std::vector<PortCounters> out;
  for (const auto& [name, ifindex] : ifindexes) {
    PortCounters port{name, ifindex, {}, {}, {}};
    bool counted = false;
    const std::map<std::string, std::uint64_t>* far = nullptr;
    const auto peer = peers.find(name);
    if (peer != peers.end())
      if (const auto c = peer_counters.find(peer->second.netns); c != peer_counters.end())
        far = &c->second;
    for (int p = 0; p < 8; ++p) {
      const auto tx = counters.find(pfc_counter_name(name, PfcDirection::sent, p));
      const auto slot = static_cast<std::size_t>(p);
      if (tx != counters.end()) port.pfc_sent[slot] = tx->second;
      counted = counted || tx != counters.end();
      // What this port received is what the other end of its wire sent.
      if (far)
        if (const auto rx = far->find(pfc_counter_name(peer->second.ifname, PfcDirection::sent, p));
            rx != far->end())
          port.pfc_received[slot] = rx->second;
    }
    if (!counted) continue;  // lo, the management and the mirror port
    if (const auto q = queues.find(name); q != queues.end()) port.queues = {q->second};
    out.push_back(std::move(port));
  }
  std::sort(out.begin(), out.end(),
            [](const PortCounters& a, const PortCounters& b) { return a.ifindex < b.ifindex; });
  return out;
}

std::vector<PortCounters> lossless_ports(const std::vector<dataplane::PortSnapshot>& ports,
                                         const std::map<std::string, int>& ifindexes) {
  std::vector<PortCounters> out;
  for (const auto& p : ports) {
    int ifindex = static_cast<int>(p.ifindex);
    if (ifindex == 0)
      if (const auto known = ifindexes.find(p.ifname); known != ifindexes.end())
        ifindex = known->second;
    if (ifindex <= 0) continue;
    PortCounters port{p.ifname, ifindex, {}, {}, {}};
    for (const auto& q : p.queue)
      port.queues.push_back({q.packets, q.bytes, q.dropped, q.dropped_bytes});
    out.push_back(std::move(port));
  }
  std::sort(out.begin(), out.end(),
            [](const PortCounters& a, const PortCounters& b) { return a.ifindex < b.ifindex; });
  return out;
}

}  // namespace rocehil::testbed
