#include "rocehil/testbed/status_json.hpp"

namespace rocehil::testbed {

namespace {

nlohmann::json interface_json(const InterfaceStatus& i) {
  nlohmann::json j = {
      {"name", i.name},
      {"link", i.link},
      {"links_to", {{"namespace", i.peer_namespace}, {"interface", i.peer_interface}}},
      {"exists", i.exists},
      {"state", i.operstate},
      {"mtu", i.mtu},
      {"addresses", i.addresses},
      {"shaped_mbps", i.mbps},
      {"rx_packets", i.rx_packets},
      {"tx_packets", i.tx_packets},
      {"rx_bytes", i.rx_bytes},
      {"tx_bytes", i.tx_bytes}};
  if (i.mirror)
    j["mirrors"] = {{"switch", i.mirror->spine},
                    {"links", i.mirror->links},
                    {"direction", to_string(i.mirror->direction)}};
  return j;
}

nlohmann::json remote_json(const RemoteMirror& r) {
  return {{"mode", to_string(r.mode)},
          {"session", r.session},
          {"source", r.source},
          {"destination", r.destination},
          {"relay_interface", r.relay_interface},
          {"ports", r.ports},
          {"truncate", r.truncate}};
}

nlohmann::json relay_json(const RelayStatus& r) {
  nlohmann::json j = {{"switch", r.spine},
                      {"netns", r.netns},
                      {"session", remote_json(r.session)},
                      {"running", r.running},
                      {"pid", r.pid == 0 ? nlohmann::json() : nlohmann::json(r.pid)},
                      {"detail", r.detail}};
  j["counters"] = r.counters ? to_json(*r.counters) : nlohmann::json();
  return j;
}

nlohmann::json routing_json(const NamespaceStatus& ns, const Topology& t) {
  const SwitchRouting& r = *ns.routing;
  nlohmann::json sessions = nlohmann::json::array();
  for (const auto& s : r.sessions)
    sessions.push_back({{"peer", s.neighbor.address},
                        {"peer_switch", s.neighbor.name},
                        {"peer_asn", s.neighbor.asn},
                        {"interface", s.neighbor.interface},
                        {"link", s.neighbor.link},
                        {"state", s.state},
                        {"uptime_ms", s.uptime_ms},
                        {"prefixes_received", s.prefixes_received},
                        {"bfd", s.bfd.empty() ? nlohmann::json() : nlohmann::json(s.bfd)}});
  nlohmann::json routes = nlohmann::json::array();
  for (const auto& route : r.routes) {
    nlohmann::json hops = nlohmann::json::array();
    for (const auto& h : route.next_hops)
      hops.push_back({{"address", h.address}, {"interface", h.interface}});
    routes.push_back(
        {{"prefix", route.prefix},
         {"protocol", route.protocol.empty() ? nlohmann::json() : nlohmann::json(route.protocol)},
         {"installed", route.installed},
         {"next_hops", hops}});
  }
  return {{"asn", bgp_asn(ns.spec)},
          {"router_id", ns.spec.mgmt_address},
          {"sessions", sessions},
          {"routes", routes},
          {"problems", routing_problems(ns.spec, t, r)}};
}

nlohmann::json totals_json(const dataplane::SwitchTotals& t) {
  return {{"forwarded", t.forwarded},
          {"pfc_sent", t.pfc_sent},
          {"pfc_received", t.pfc_received},
          {"ecn_marked", t.ecn_marked},
          {"queue_drops", t.queue_drops},
          {"forwarding_drops", t.forwarding_drops},
          {"socket_drops", t.socket_drops},
          {"lossless_drops", t.lossless_drops},
          {"storms_detected", t.storms_detected},
          {"storm_drops", t.storm_drops}};
}

nlohmann::json port_json(const dataplane::PortSnapshot& p) {
  nlohmann::json queues = nlohmann::json::array();
  for (std::size_t tc = 0; tc < p.queue.size(); ++tc) {
    const auto& q = p.queue[tc];
    queues.push_back({{"class", tc},
                      {"packets", q.packets},
                      {"bytes", q.bytes},
                      {"dropped", q.dropped},
                      {"dropped_bytes", q.dropped_bytes},
                      {"ecn_marked", q.ecn_marked},
                      {"depth_bytes", q.depth_bytes},
                      {"peak_depth_bytes", q.peak_depth_bytes}});
  }
  nlohmann::json priorities = nlohmann::json::array();
  for (std::size_t prio = 0; prio < p.priority.size(); ++prio) {
    const auto& r = p.priority[prio];
    priorities.push_back({{"priority", prio},
                          {"pfc_sent", r.pfc_sent},
                          {"pfc_received", r.pfc_received},
                          {"xon_sent", r.xon_sent},
                          {"xon_received", r.xon_received},
                          {"paused_ns", r.paused_ns},
                          {"ingress_bytes", r.ingress_bytes},
                          {"peak_ingress_bytes", r.peak_ingress_bytes},
                          {"lossless_drops", r.lossless_drops},
                          {"storms_detected", r.storms_detected},
                          {"storms_restored", r.storms_restored},
                          {"storm_drops", r.storm_drops}});
  }
  return {{"name", p.ifname},
          {"ifindex", p.ifindex},
          {"rx_packets", p.rx_packets},
          {"rx_bytes", p.rx_bytes},
          {"forwarded", p.forwarded},
          {"no_route", p.no_route},
          {"unresolved", p.unresolved},
          {"ttl_expired", p.ttl_expired},
          {"socket_drops", p.socket_drops},
          {"queues", queues},
          {"priorities", priorities}};
}

// Absent (null), never zeros, when the counters file could not be read, with the reason.
nlohmann::json dataplane_json(const DataplaneStatus& d) {
  nlohmann::json j = {{"counters_file", d.counters_file},
                      {"problem", d.problem.empty() ? nlohmann::json() : nlohmann::json(d.problem)},
                      {"totals", nullptr},
                      {"ports", nullptr}};
  if (d.ports) {
    j["totals"] = totals_json(dataplane::totals(*d.ports));
    j["ports"] = nlohmann::json::array();
    for (const auto& p : *d.ports) j["ports"].push_back(port_json(p));
  }
  return j;
}

}  // namespace

nlohmann::json status_json(const StatusResult& s) {
  nlohmann::json namespaces = nlohmann::json::array();
  for (const auto& ns : s.namespaces) {
    nlohmann::json addresses = nlohmann::json::array();
    nlohmann::json interfaces = nlohmann::json::array();
    for (const auto& i : ns.interfaces) {
      for (const auto& a : i.addresses) addresses.push_back(a);
      interfaces.push_back(interface_json(i));
    }
    nlohmann::json j = {
        {"name", ns.spec.name},
        {"netns", ns.spec.netns},
        {"role", to_string(ns.spec.role)},
        {"rack", ns.spec.rack == 0 ? nlohmann::json() : nlohmann::json(ns.spec.rack)},
        {"exists", ns.exists},
        {"addresses", addresses},
        {"interfaces", interfaces}};
    if (ns.sshd_answers)
      j["sshd"] = {{"address", ns.spec.mgmt_address},
                   {"port", 22},
                   {"answers", *ns.sshd_answers},
                   {"detail", ns.sshd_detail}};
    if (ns.snmpd_answers)
      j["snmpd"] = {{"address", ns.spec.mgmt_address},
                    {"port", 161},
                    {"answers", *ns.snmpd_answers},
                    {"detail", ns.snmpd_detail}};
    if (ns.lldpd_runs) {
      nlohmann::json neighbors = nlohmann::json::array();
      for (const auto& n : ns.lldp_neighbors)
        neighbors.push_back(
            {{"interface", n.interface}, {"system_name", n.system_name}, {"port_id", n.port_id}});
      j["lldpd"] = {
          {"runs", *ns.lldpd_runs}, {"detail", ns.lldpd_detail}, {"neighbors", neighbors}};
    }
    if (!ns.spec.fabric_address.empty()) j["fabric_address"] = ns.spec.fabric_address;
    if (s.slurm && ns.sshd_answers)
      j["slurm_state"] = ns.slurm_state ? nlohmann::json(*ns.slurm_state) : nlohmann::json();
    if (ns.routing) j["routing"] = routing_json(ns, s.topology);
    if (ns.dataplane) j["dataplane"] = dataplane_json(*ns.dataplane);
    if (ns.guest)
      j["guest"] = {{"running", ns.guest->running},
                    {"pid", ns.guest->pid},
                    {"state", ns.guest->state},
                    {"detail", ns.guest->detail},
                    {"resident_kib", ns.guest->resident_kib},
                    {"console", ns.guest->console}};
    namespaces.push_back(std::move(j));
  }
  nlohmann::json out = {{"schema_version", 1},
                        {"id", s.id},
                        {"dir", s.dir},
                        {"phase", s.phase},
                        {"healthy", s.healthy()},
                        {"bridge",
                         {{"name", s.topology.bridge},
                          {"exists", s.bridge_exists},
                          {"address", s.topology.mgmt_gateway}}},
                        {"mgmt_prefix", s.topology.mgmt_prefix},
                        {"fabric_prefix", s.topology.fabric_prefix},
                        {"namespaces", namespaces},
                        {"stray_namespaces", s.stray_namespaces}};
  nlohmann::json relays = nlohmann::json::array();
  for (const auto& r : s.relays) relays.push_back(relay_json(r));
  out["mirror"] = {{"mode", to_string(s.mirror_mode)}, {"relays", relays}};
  out["routing"] = {{"mode", to_string(s.routing)}};
  out["lossless"] = s.lossless;
  if (s.routing == Routing::bgp)
    out["routing"]["bfd"] = {{"interval_ms", s.bfd.interval_ms}, {"multiplier", s.bfd.multiplier}};
  if (s.slurm)
    out["slurm"] = {
        {"conf", s.slurm_conf},
        {"problem", s.slurm_problem.empty() ? nlohmann::json() : nlohmann::json(s.slurm_problem)}};
  return out;
}

nlohmann::json up_json(const UpResult& up) {
  nlohmann::json namespaces = nlohmann::json::array();
  nlohmann::json agents = nlohmann::json::array();
  for (const auto& ns : up.topology.namespaces) {
    namespaces.push_back(ns.netns);
    if (is_switch(ns)) agents.push_back({{"switch", ns.name}, {"address", ns.mgmt_address}});
  }
  const TestbedPaths& p = up.paths;
  const nlohmann::json snmp = {{"community_file", p.snmp_community()},
                               {"write_community_file", p.snmp_write_community()},
                               {"v3",
                                {{"user_file", p.snmp_v3_user()},
                                 {"auth", "sha"},
                                 {"auth_key_file", p.snmp_v3_auth_key()},
                                 {"priv", "aes"},
                                 {"priv_key_file", p.snmp_v3_priv_key()}}},
                               {"agents", agents}};
  nlohmann::json mirrors = nlohmann::json::array();
  for (const auto& m : up.topology.mirrors)
    mirrors.push_back({{"interface", m.interface},
                       {"netns", up.topology.find("cap")->netns},
                       {"switch", m.spine},
                       {"links", m.links},
                       {"direction", to_string(m.direction)},
                       {"mode", to_string(m.remote ? m.remote->mode : MirrorMode::local)},
                       {"remote", m.remote ? remote_json(*m.remote) : nlohmann::json()}});
  return {{"schema_version", 1},
          {"id", up.topology.id},
          {"dir", up.paths.dir},
          {"seconds", up.seconds},
          {"inventory", up.paths.inventory()},
          {"ssh_config", up.paths.ssh_config()},
          {"mgmt_prefix", up.topology.mgmt_prefix},
          {"namespaces", namespaces},
          {"mirrors", mirrors},
          {"snmp", snmp},
          {"slurm_conf", up.slurm_conf ? nlohmann::json(*up.slurm_conf) : nlohmann::json()}};
}

nlohmann::json down_json(const DownResult& down) {
  return {{"schema_version", 1},
          {"id", down.id},
          {"namespaces_removed", down.namespaces},
          {"links_removed", down.links},
          {"processes_stopped", down.processes},
          {"seconds", down.seconds}};
}

}  // namespace rocehil::testbed
