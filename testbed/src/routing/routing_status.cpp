#include "rocehil/testbed/routing_status.hpp"

#include <fmt/format.h>

namespace rocehil::testbed {

std::vector<std::string> routed_rack_prefixes(const Namespace& ns, const Topology& t) {
  std::vector<std::string> out;
  if (!is_switch(ns)) return out;
  for (const auto& n : t.namespaces)
    if (n.role == Role::leaf && !(ns.role == Role::leaf && n.rack == ns.rack))
      out.push_back(rack_prefix(n.rack));
  return out;
}

std::size_t expected_next_hops(const Namespace& ns, const Topology& t) {
  if (ns.role != Role::leaf) return 1;
  std::size_t spines = 0;
  for (const auto& n : t.namespaces) spines += n.role == Role::spine;
  return spines;
}

std::vector<BgpSession> parse_sessions(const std::vector<BgpNeighbor>& expected,
                                       const nlohmann::json& bgp_summary,
                                       const nlohmann::json& bfd_peers) {
  // FRR prints {} when bgpd has no router yet, and the peers under the address family.
  const nlohmann::json none = nlohmann::json::object();
  const nlohmann::json& family =
      bgp_summary.contains("ipv4Unicast") ? bgp_summary["ipv4Unicast"] : none;
  const nlohmann::json& peers = family.contains("peers") ? family["peers"] : none;
  std::vector<BgpSession> out;
  for (const auto& n : expected) {
    BgpSession s{n, "not configured", 0, 0, {}};
    if (peers.contains(n.address)) {
      const auto& p = peers[n.address];
      s.state = p.value("state", std::string("?"));
      if (s.state == "Established") {
        s.uptime_ms = p.value("peerUptimeMsec", 0LL);
        s.prefixes_received = p.value("pfxRcd", 0LL);
      }
    }
    if (bfd_peers.is_array())
      for (const auto& b : bfd_peers)
        if (b.value("peer", std::string()) == n.address) s.bfd = b.value("status", std::string());
    out.push_back(std::move(s));
  }
  return out;
}

std::vector<RackRoute> parse_rack_routes(const std::vector<std::string>& prefixes,
                                         const nlohmann::json& ip_route) {
  std::vector<RackRoute> out;
  for (const auto& prefix : prefixes) {
    RackRoute r{prefix, {}, false, {}};
    if (ip_route.contains(prefix)) {
      // One entry per protocol that offers the prefix; the selected one is what is used.
      for (const auto& entry : ip_route[prefix]) {
        if (!entry.value("selected", false)) continue;
        r.protocol = entry.value("protocol", std::string());
        r.installed = entry.value("installed", false);
        for (const auto& hop : entry.value("nexthops", nlohmann::json::array()))
          if (hop.value("fib", false))
            r.next_hops.push_back(
                {hop.value("ip", std::string()), hop.value("interfaceName", std::string())});
      }
    }
    out.push_back(std::move(r));
  }
  return out;
}

std::vector<std::string> routing_problems(const Namespace& ns, const Topology& t,
                                          const SwitchRouting& routing) {
  std::vector<std::string> out;
  if (!routing.problem.empty()) return {routing.problem};
  for (const auto& s : routing.sessions)
    if (s.state != "Established")
      out.push_back(fmt::format("session to {} ({} over {}) is {}", s.neighbor.name,
                                s.neighbor.address, s.neighbor.link, s.state));
  const std::size_t paths = expected_next_hops(ns, t);
  for (const auto& r : routing.routes) {
    if (r.protocol.empty() || !r.installed)
      out.push_back(fmt::format("no route to {} in the kernel", r.prefix));
    else if (r.next_hops.size() != paths)
      out.push_back(fmt::format("{} has {} of {} next hop{}", r.prefix, r.next_hops.size(), paths,
                                paths == 1 ? "" : "s"));
  }
  return out;
}

}  // namespace rocehil::testbed
