#include "rocehil/testbed/lldp_files.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace rocehil::testbed {

namespace {

// LLDP's default interval, as a real switch sends: `up` asks every lldpd to send at once when
// all listen, so neighbours do not wait for it. A spine's mirrored ports count each LLDP frame
// they receive as a receive discard (see pfc_nft_ruleset): one per interval.
constexpr int tx_interval_s = 30;

}  // namespace

std::string lldpd_conf(const Namespace& ns) {
  return fmt::format(
      "# Written by 'rocehil testbed up': lldpd of {name} (namespace {netns}).\n"
      "configure system hostname {name}\n"
      "configure system ip management pattern {address}\n"
      "configure lldp portidsubtype ifname\n"
      "configure lldp tx-interval {interval}\n",
      fmt::arg("interval", tx_interval_s), fmt::arg("name", ns.name), fmt::arg("netns", ns.netns),
      fmt::arg("address", ns.mgmt_address));
}

std::vector<std::string> lldpd_argv(const Namespace& ns, const TestbedPaths& paths) {
  std::string ports;
  for (const Interface* i : fabric_interfaces(ns)) ports += (ports.empty() ? "" : ",") + i->name;
  // -O: this file instead of /etc/lldpd.conf and /etc/lldpd.d, which are the machine's.
  std::vector<std::string> argv = {"ip",
                                   "netns",
                                   "exec",
                                   ns.netns,
                                   "lldpd",
                                   "-u",
                                   paths.lldpd_socket(ns),
                                   "-O",
                                   paths.lldpd_conf(ns),
                                   "-I",
                                   ports};
  if (is_switch(ns)) argv.insert(argv.end(), {"-x", "-X", paths.agentx_socket(ns)});
  return argv;
}

std::vector<LldpNeighbor> expected_lldp_neighbors(const Namespace& ns, const Topology& t) {
  std::vector<LldpNeighbor> out;
  for (const Interface* i : fabric_interfaces(ns)) {
    for (const auto& l : t.links) {
      if (l.name != i->link) continue;
      const LinkEnd& far = (l.a.ns == ns.name && l.a.interface == i->name) ? l.b : l.a;
      out.push_back({i->name, far.ns, far.interface});
    }
  }
  return out;
}

namespace {

// json0 wraps every value in a list of objects: [{"value": "h1"}].
std::string first_value(const nlohmann::json& list, const char* key = "value") {
  if (!list.is_array() || list.empty() || !list[0].is_object()) return {};
  return list[0].value(key, "");
}

}  // namespace

bool lldpd_configured(const nlohmann::json& json0, const Namespace& ns) {
  if (!json0.is_object()) return false;
  const auto configuration = json0.value("configuration", nlohmann::json::array());
  if (!configuration.is_array() || configuration.empty() || !configuration[0].is_object())
    return false;
  const auto config = configuration[0].value("config", nlohmann::json::array());
  if (!config.is_array() || config.empty() || !config[0].is_object()) return false;
  const auto value = [&](const char* key) {
    return first_value(config[0].value(key, nlohmann::json::array()));
  };
  return value("hostname") == ns.name && value("lldp-portid-type") == "ifname" &&
         value("tx-delay") == std::to_string(tx_interval_s);
}

std::vector<LldpNeighbor> parse_lldp_neighbors(const nlohmann::json& json0) {
  std::vector<LldpNeighbor> out;
  if (!json0.is_object()) return out;
  for (const auto& lldp : json0.value("lldp", nlohmann::json::array())) {
    if (!lldp.is_object()) continue;
    for (const auto& i : lldp.value("interface", nlohmann::json::array())) {
      if (!i.is_object()) continue;
      LldpNeighbor n;
      n.interface = i.value("name", "");
      const auto chassis = i.value("chassis", nlohmann::json::array());
      if (chassis.is_array() && !chassis.empty() && chassis[0].is_object())
        n.system_name = first_value(chassis[0].value("name", nlohmann::json::array()));
      const auto port = i.value("port", nlohmann::json::array());
      if (port.is_array() && !port.empty() && port[0].is_object())
        n.port_id = first_value(port[0].value("id", nlohmann::json::array()));
      out.push_back(std::move(n));
    }
  }
  return out;
}

std::vector<std::string> missing_lldp_neighbors(const std::vector<LldpNeighbor>& expected,
                                                const std::vector<LldpNeighbor>& seen) {
  std::vector<std::string> out;
  for (const auto& e : expected)
    if (std::find(seen.begin(), seen.end(), e) == seen.end())
      out.push_back(fmt::format("{} on {}", e.system_name, e.interface));
  return out;
}

}  // namespace rocehil::testbed
