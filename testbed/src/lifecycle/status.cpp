#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "hosts/guests.hpp"
#include "lifecycle/dataplane_status.hpp"
#include "mirrors/mirror_relays.hpp"
#include "rocehil/common/error.hpp"
#include "rocehil/testbed/slurm_cluster.hpp"
#include "rocehil/testbed/state.hpp"
#include "rocehil/testbed/testbed.hpp"
#include "routing/frr_daemons.hpp"
#include "switches/snmp_probe.hpp"
#include "switches/snmp_secrets.hpp"
#include "switches/switch_agents.hpp"
#include "tools/host_checks.hpp"
#include "tools/live.hpp"

namespace rocehil::testbed {

namespace {

// The far end of `interface`'s link, as (namespace, interface); "root" for the bridge side.
std::pair<std::string, std::string> peer_of(const Topology& t, const Namespace& ns,
                                            const Interface& i) {
  for (const auto& l : t.links) {
    if (l.name != i.link) continue;
    const LinkEnd& other = (l.a.ns == ns.name && l.a.interface == i.name) ? l.b : l.a;
    if (other.ns.empty()) return {"root", t.bridge};
    return {other.ns, other.interface};
  }
  return {};
}

void read_interfaces(NamespaceStatus& s, const Topology& t) {
  std::map<std::string, nlohmann::json> live;
  for (auto& link : ip_json(s.spec.netns, {"-s", "addr", "show"}))
    live[link.value("ifname", "")] = link;
  for (const auto& i : s.spec.interfaces) {
    InterfaceStatus out;
    out.name = i.name;
    out.link = i.link;
    out.mbps = i.mbps;
    std::tie(out.peer_namespace, out.peer_interface) = peer_of(t, s.spec, i);
    for (const auto& m : t.mirrors)
      if (m.interface == i.name && s.spec.role == Role::capture && !m.remote) out.mirror = m;
    if (auto it = live.find(i.name); it != live.end()) {
      const auto& j = it->second;
      out.exists = true;
      out.operstate = j.value("operstate", "");
      out.mtu = j.value("mtu", 0);
      for (const auto& a : j.value("addr_info", nlohmann::json::array()))
        if (a.value("family", "") == "inet")
          out.addresses.push_back(
              fmt::format("{}/{}", a.value("local", ""), a.value("prefixlen", 0)));
      const auto stats = j.value("stats64", nlohmann::json::object());
      const auto rx = stats.value("rx", nlohmann::json::object());
      const auto tx = stats.value("tx", nlohmann::json::object());
      out.rx_packets = rx.value("packets", std::uint64_t{0});
      out.rx_bytes = rx.value("bytes", std::uint64_t{0});
      out.tx_packets = tx.value("packets", std::uint64_t{0});
      out.tx_bytes = tx.value("bytes", std::uint64_t{0});
    }
    s.interfaces.push_back(std::move(out));
  }
}

// The switches' agents: snmpd answering on the management address, lldpd reachable on its
// socket with what it has heard.
void read_agents(NamespaceStatus& s, const TestbedPaths& paths, const std::string& community) {
  const Namespace& ns = s.spec;
  if (is_switch(ns)) {
    s.snmpd_answers = s.exists && snmp_answers(ns.mgmt_address, community, 1000, s.snmpd_detail);
    if (!s.exists) s.snmpd_detail = "namespace missing";
  }
  if (runs_lldpd(ns)) {
    s.lldpd_runs =
        s.exists && lldp_neighbors(paths.lldpd_socket(ns), s.lldp_neighbors, s.lldpd_detail);
    if (!s.exists) s.lldpd_detail = "namespace missing";
  }
}

}  // namespace

bool StatusResult::healthy() const {
  if (phase == "none" || namespaces.empty() || !bridge_exists || !stray_namespaces.empty())
    return false;
  for (const auto& ns : namespaces) {
    if (!ns.exists || (ns.sshd_answers && !*ns.sshd_answers)) return false;
    if (ns.guest && (!ns.guest->running || ns.guest->state != "ready")) return false;
    if ((ns.snmpd_answers && !*ns.snmpd_answers) || (ns.lldpd_runs && !*ns.lldpd_runs))
      return false;
    if (slurm && ns.sshd_answers &&
        (!ns.slurm_state || ns.slurm_state->ends_with("*") || ns.slurm_state->starts_with("down") ||
         ns.slurm_state->starts_with("unk") || ns.slurm_state->starts_with("fail")))
      return false;
    for (const auto& i : ns.interfaces)
      if (!i.exists || i.operstate != "UP") return false;
    if (ns.routing && !routing_problems(ns.spec, topology, *ns.routing).empty()) return false;
    if (ns.dataplane && !ns.dataplane->ports) return false;
  }
  for (const auto& r : relays)
    if (!r.running) return false;
  return true;
}

StatusResult status(const std::string& dir_option, const std::string& id_option) {
  require_root("status");
  require_tools({"ip"});
  StatusResult result;
  result.dir = dir_option.empty() ? std::string() : absolute_dir(dir_option);
  std::optional<TestbedState> state;
  if (!result.dir.empty()) state = read_state(TestbedPaths{result.dir}.state());
  if (id_option.empty() && result.dir.empty())
    throw input_error("give --dir DIR (the testbed's directory) or --id ID");
  result.id = !id_option.empty() ? id_option : state ? state->options.id : derive_id(result.dir);
  result.phase = state ? state->phase : "none";

  std::vector<std::string> existing = testbed_namespaces(result.id);
  const auto links = root_links(result.id);
  if (state) {
    result.topology = build_topology(state->options, state->mgmt_octet);
    result.bridge_exists =
        std::find(links.begin(), links.end(), result.topology.bridge) != links.end();
  }
  const std::string community = read_snmp_community(TestbedPaths{result.dir});
  for (const auto& ns : result.topology.namespaces) {
    NamespaceStatus s;
    s.spec = ns;
    const auto it = std::find(existing.begin(), existing.end(), ns.netns);
    s.exists = it != existing.end();
    if (s.exists) {
      existing.erase(it);
      read_interfaces(s, result.topology);
    } else {
      for (const auto& i : ns.interfaces) {
        InterfaceStatus missing;
        missing.name = i.name;
        missing.link = i.link;
        std::tie(missing.peer_namespace, missing.peer_interface) = peer_of(result.topology, ns, i);
        s.interfaces.push_back(std::move(missing));
      }
    }
    if (runs_sshd(ns)) {
      s.sshd_answers = s.exists && ssh_banner(ns.mgmt_address, 1000, s.sshd_detail);
      if (!s.exists) s.sshd_detail = "namespace missing";
    }
    read_agents(s, TestbedPaths{result.dir}, community);
    if (state && state->options.vm.enabled && ns.role == Role::host)
      s.guest = guest_status(ns, TestbedPaths{result.dir});
    if (state && state->options.routing == Routing::bgp && is_switch(ns)) {
      if (s.exists) {
        s.routing = read_routing(ns, result.topology);
      } else {
        s.routing = SwitchRouting{};
        s.routing->problem = "namespace missing";
      }
    }
    // A --vm guest's NIC process keeps the same counters as a switch (guest_nic.hpp).
    if (state && state->options.lossless &&
        (is_switch(ns) || (state->options.vm.enabled && ns.role == Role::host))) {
      if (s.exists) {
        s.dataplane = read_dataplane_status(dataplane::shared_counters_path(ns.netns));
      } else {
        s.dataplane = DataplaneStatus{dataplane::shared_counters_path(ns.netns), std::nullopt,
                                      "namespace missing"};
      }
    }
    result.namespaces.push_back(std::move(s));
  }
  result.stray_namespaces = std::move(existing);
  if (state) {
    result.routing = state->options.routing;
    result.bfd = state->options.bfd;
    result.lossless = state->options.lossless;
    result.mirror_mode = state->options.mirror_mode;
    result.relays = mirror_relay_status(result.topology, TestbedPaths{result.dir});
  }
  if (state && state->options.slurm) {
    // sinfo's compact states: idle, alloc, mix, drain, down*, unk* ('*': not responding).
    const TestbedPaths paths{result.dir};
    result.slurm = true;
    result.slurm_conf = slurm_paths(paths, result.id).conf();
    for (const auto& line : slurm_node_states(paths, result.id, result.slurm_problem)) {
      const auto space = line.find(' ');
      for (auto& ns : result.namespaces)
        if (ns.spec.name == line.substr(0, space) && space != std::string::npos)
          ns.slurm_state = line.substr(space + 1);
    }
  }
  return result;
}

}  // namespace rocehil::testbed
