#include "rocehil/inventory/json.hpp"

namespace rocehil::inventory {

namespace {

void put(nlohmann::json& j, const char* key, const std::string& value) {
  if (!value.empty()) j[key] = value;
}

nlohmann::json ssh_json(const SshSettings& s) {
  nlohmann::json j = nlohmann::json::object();
  put(j, "user", s.user);
  if (s.port != 0) j["port"] = s.port;
  put(j, "identity", s.identity);
  put(j, "known_hosts", s.known_hosts);
  put(j, "jump", s.jump);
  if (!s.options.empty()) j["options"] = s.options;
  j["connect_timeout_s"] = s.connect_timeout_s;
  return j;
}

nlohmann::json nic_json(const Nic& n) {
  nlohmann::json j = nlohmann::json::object();
  put(j, "device", n.device);
  if (!n.device.empty()) j["port"] = n.port;
  if (n.gid_index >= 0) j["gid_index"] = n.gid_index;
  put(j, "netdev", n.netdev);
  put(j, "ip", n.ip);
  if (n.link_gbps > 0) j["link_gbps"] = n.link_gbps;
  if (n.mtu > 0) j["mtu"] = n.mtu;
  if (n.numa >= 0) j["numa"] = n.numa;
  if (n.gpu >= 0) j["gpu"] = n.gpu;
  j["rail"] = n.rail;
  put(j, "link", n.link);
  return j;
}

}  // namespace

// Where each secret comes from, never the secret: this goes into run.json and reports.
nlohmann::json to_json(const SnmpSettings& s) {
  nlohmann::json j{{"version", std::string(to_string(s.version))}};
  put(j, "community_file", s.community_file);
  put(j, "community_env", s.community_env);
  put(j, "write_community_file", s.write_community_file);
  put(j, "write_community_env", s.write_community_env);
  put(j, "user", s.user);
  put(j, "auth", s.auth);
  put(j, "auth_key_file", s.auth_key_file);
  put(j, "auth_key_env", s.auth_key_env);
  put(j, "priv", s.priv);
  put(j, "priv_key_file", s.priv_key_file);
  put(j, "priv_key_env", s.priv_key_env);
  j["port"] = s.port;
  j["timeout_ms"] = s.timeout_ms;
  j["retries"] = s.retries;
  j["counter_refresh_ms"] = s.counter_refresh_ms;
  if (s.version == SnmpSettings::Version::v3) j["writable"] = s.writable;
  return j;
}

nlohmann::json to_json(const Host& h) {
  nlohmann::json j{{"name", h.name}, {"address", h.address}};
  put(j, "rack", h.rack);
  j["labels"] = h.labels;
  j["provider"] = std::string(to_string(h.provider));
  j["launcher"] = std::string(to_string(h.launcher));
  j["agent"] = h.agent;
  put(j, "netns", h.netns);
  j["ssh"] = ssh_json(h.ssh);
  j["nics"] = nlohmann::json::array();
  for (const auto& n : h.nics) j["nics"].push_back(nic_json(n));
  if (h.where.line > 0) j["line"] = h.where.line;
  return j;
}

nlohmann::json to_json(const CapturePoint& c) {
  nlohmann::json j{{"name", c.name}, {"host", c.host}, {"backend", c.backend}};
  put(j, "interface", c.interface);
  if (!c.dpdk_args.empty()) j["dpdk_args"] = c.dpdk_args;
  if (c.link_gbps > 0) j["link_gbps"] = c.link_gbps;
  nlohmann::json m = nlohmann::json::object();
  put(m, "switch", c.mirrors.switch_name);
  if (!c.mirrors.links.empty()) m["links"] = c.mirrors.links;
  if (!c.mirrors.ports.empty()) m["ports"] = c.mirrors.ports;
  put(m, "direction", c.mirrors.direction);
  j["mirrors"] = m;
  if (c.remote) {
    nlohmann::json r{{"session", c.remote->session}};
    put(r, "source", c.remote->source);
    j["remote"] = r;
  }
  return j;
}

nlohmann::json to_json(const Inventory& inv) {
  nlohmann::json j{{"schema_version", inv.schema_version}, {"name", inv.name}, {"file", inv.file}};
  nlohmann::json d{{"ssh", ssh_json(inv.defaults.ssh)},
                   {"agent", inv.defaults.agent},
                   {"provider", std::string(to_string(inv.defaults.provider))},
                   {"launcher", std::string(to_string(inv.defaults.launcher))},
                   {"port", inv.defaults.port}};
  if (inv.defaults.link_gbps > 0) d["link_gbps"] = inv.defaults.link_gbps;
  if (inv.defaults.gid_index >= 0) d["gid_index"] = inv.defaults.gid_index;
  j["defaults"] = d;
  j["hosts"] = nlohmann::json::array();
  for (const auto& h : inv.hosts) j["hosts"].push_back(to_json(h));
  j["racks"] = nlohmann::json::array();
  for (const auto& r : inv.racks) {
    nlohmann::json rj{{"name", r.name}, {"hosts", r.hosts}};
    put(rj, "leaf", r.leaf);
    j["racks"].push_back(rj);
  }
  j["switches"] = nlohmann::json::array();
  for (const auto& s : inv.switches) {
    nlohmann::json sj{{"name", s.name}, {"role", s.role}};
    put(sj, "rack", s.rack);
    put(sj, "address", s.address);
    if (s.ports > 0) sj["ports"] = s.ports;
    if (s.port_gbps > 0) sj["port_gbps"] = s.port_gbps;
    put(sj, "netns", s.netns);
    if (s.snmp) sj["snmp"] = to_json(*s.snmp);
    j["switches"].push_back(sj);
  }
  j["links"] = nlohmann::json::array();
  for (const auto& l : inv.links)
    j["links"].push_back({{"name", l.name},
                          {"a", l.a.node + ":" + l.a.port},
                          {"b", l.b.node + ":" + l.b.port},
                          {"gbps", l.gbps}});
  j["captures"] = nlohmann::json::array();
  for (const auto& c : inv.captures) j["captures"].push_back(to_json(c));
  if (inv.controller) {
    nlohmann::json cj{{"address", inv.controller->address},
                      {"port", inv.controller->port},
                      {"join_timeout_s", inv.controller->join_timeout_s}};
    put(cj, "listen", inv.controller->listen);
    cj["agents"] = inv.controller->agents_external ? "external" : "rocehil";
    put(cj, "fleet", inv.controller->fleet);
    put(cj, "secret_file", inv.controller->secret_file);
    j["controller"] = cj;
  }
  return j;
}

}  // namespace rocehil::inventory
