#include "rocehil/testbed/link_state.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "rocehil/common/error.hpp"
#include "rocehil/testbed/paths.hpp"
#include "rocehil/testbed/state.hpp"
#include "tools/host_checks.hpp"
#include "tools/live.hpp"
#include "tools/process.hpp"

namespace rocehil::testbed {

namespace {

bool is_fabric_link(const Link& l) {
  return l.kind == LinkKind::host || l.kind == LinkKind::uplink;
}

// The topology of the testbed in `dir`, which must be up; `guests`: whether its hosts are QEMU
// guests (their addresses and routes are then the guests', not their namespaces'); `routing`:
// how its switches route.
Topology running_topology(const std::string& dir, std::string_view command, bool* guests = nullptr,
                          Routing* routing = nullptr) {
  require_root(command);
  require_tools({"ip"});
  if (dir.empty()) throw input_error("--dir is required: the testbed's directory");
  const std::string absolute = absolute_dir(dir);
  const auto state = read_state(TestbedPaths{absolute}.state());
  if (!state || state->phase != "up")
    throw input_error(fmt::format(
        "{} holds no testbed that is up; bring one up with 'rocehil testbed up --dir {}'", absolute,
        absolute));
  if (guests != nullptr) *guests = state->options.vm.enabled;
  if (routing != nullptr) *routing = state->options.routing;
  return build_topology(state->options, state->mgmt_octet);
}

std::string ip_link_show(const LinkPort& p) {
  return run_checked(fmt::format("reading {} in {}", p.interface, p.netns),
                     {"ip", "-n", p.netns, "-j", "link", "show", "dev", p.interface});
}

// The kernel drops a route whose only next hop is over an interface taken down (a multipath
// route keeps the hop, marked dead): once the interface is up again, the routes `up` wrote over
// it are written again, as a switch's routing would relearn them.
// Under BGP a switch's routes are its zebra's, which writes them again itself; a host's route
// to its leaf is still static.
void restore_routes(const Topology& t, const LinkPort& port, bool guests, Routing routing) {
  for (const Namespace& ns : t.namespaces) {
    if (ns.netns != port.netns || (guests && ns.role == Role::host)) continue;
    if (routing == Routing::bgp && is_switch(ns)) continue;
    for (const Route& r : ns.routes) {
      if (std::find(r.devices.begin(), r.devices.end(), port.interface) == r.devices.end())
        continue;
      std::vector<std::string> words = {"ip", "-n", ns.netns, "route", "replace", r.prefix};
      if (r.next_hops.size() == 1)
        words.insert(words.end(), {"via", r.next_hops[0], "dev", r.devices[0]});
      else
        for (std::size_t h = 0; h < r.next_hops.size(); ++h)
          words.insert(words.end(),
                       {"nexthop", "via", r.next_hops[h], "dev", r.devices[h], "weight", "1"});
      run_checked(fmt::format("writing the route to {} in {} again", r.prefix, ns.netns), words);
    }
  }
}

}  // namespace

std::vector<LinkPort> link_ports(const Topology& t, std::string_view link) {
  for (const Link& l : t.links) {
    if (l.name != link || !is_fabric_link(l)) continue;
    std::vector<LinkPort> out;
    for (const LinkEnd* end : {&l.a, &l.b}) {
      const Namespace* ns = t.find(end->ns);
      if (ns == nullptr)
        throw Error(
            ExitCode::infrastructure,
            fmt::format("testbed {}: link {} ends in namespace '{}', which it does not have", t.id,
                        l.name, end->ns));
      out.push_back({ns->netns, end->interface});
    }
    return out;
  }
  std::string known;
  for (const Link& l : t.links)
    if (is_fabric_link(l)) known += (known.empty() ? "" : ", ") + l.name;
  throw input_error(
      fmt::format("testbed {} has no fabric link '{}'; its links: {}", t.id, link, known));
}

bool admin_up_in(std::string_view ip_json) {
  try {
    const nlohmann::json j = nlohmann::json::parse(ip_json);
    if (!j.is_array() || j.size() != 1 || !j[0].contains("flags") || !j[0]["flags"].is_array())
      throw std::runtime_error("not one interface with flags");
    const auto& flags = j[0]["flags"];
    return std::find(flags.begin(), flags.end(), "UP") != flags.end();
  } catch (const std::exception& e) {
    throw Error(ExitCode::infrastructure,
                fmt::format("'ip -j link show' printed what is not one interface: {}", e.what()));
  }
}

void set_link_state(const std::string& dir, std::string_view link, bool up) {
  bool guests = false;
  Routing routing = Routing::static_routes;
  const Topology t = running_topology(dir, "testbed link", &guests, &routing);
  const char* state = up ? "up" : "down";
  for (const LinkPort& p : link_ports(t, link)) {
    run_checked(fmt::format("setting {} {} in {}", p.interface, state, p.netns),
                {"ip", "-n", p.netns, "link", "set", "dev", p.interface, state});
    if (admin_up_in(ip_link_show(p)) != up)
      throw Error(ExitCode::infrastructure,
                  fmt::format("testbed {}: link {}: {} in {} does not read {} after 'ip link set "
                              "{}'",
                              t.id, link, p.interface, p.netns, state, state));
  }
  // Under BGP only the link changes for the switches: their zebra take their routes off it (BFD
  // and the interface's state end its sessions) and back once the sessions are up again.
  if (up)
    for (const LinkPort& p : link_ports(t, link)) restore_routes(t, p, guests, routing);
}

bool link_is_up(const std::string& dir, std::string_view link) {
  const Topology t = running_topology(dir, "testbed link");
  const std::vector<LinkPort> ports = link_ports(t, link);
  return std::all_of(ports.begin(), ports.end(),
                     [](const LinkPort& p) { return admin_up_in(ip_link_show(p)); });
}

}  // namespace rocehil::testbed
