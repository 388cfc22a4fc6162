// Switches, links and racks: the topology, and the references between them and the hosts.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>

#include "loader.hpp"
#include "rocehil/inventory/names.hpp"
#include "rocehil/inventory/range.hpp"

namespace rocehil::inventory::detail {

void Loader::read_switch(const YAML::Node& entry) {
  const MapReader m(ctx_, entry, "switch entry",
                    {"name", "role", "rack", "address", "ports", "port_gbps", "netns", "snmp",
                     "ssh", "link_down", "link_up", "commands"});
  if (!m.ok()) return;
  const YAML::Node name_node = m.require("name", "leaf01");
  const YAML::Node role_node = m.require("role", "leaf");
  if (!name_node.IsDefined()) return;
  const auto name_text = read_string(ctx_, name_node, "switch name");
  if (!name_text) return;
  RangeExpansion names = expand_range(*name_text, 4096);
  if (!names.error.empty()) {
    ctx_.error(name_node, "switch name " + names.error);
    return;
  }
  for (const auto& n : names.values)
    if (!is_valid_name(n)) {
      ctx_.error(name_node,
                 fmt::format("switch name '{}' is not a valid name; {}", shown(n), name_rule));
      return;
    }
  const std::string owner = fmt::format("switch '{}'", shown(*name_text));
  const std::size_t count = names.values.size();
  const std::string count_source = fmt::format("the name '{}'", shown(*name_text));
  Switch base;
  base.where = location_of(name_node);
  if (role_node.IsDefined())
    if (const auto v = read_choice(ctx_, role_node, owner + ": role",
                                   {"leaf", "spine", "superspine", "other"}))
      base.role = *v;
  if (const auto n = m.get("ports"); n.IsDefined())
    if (const auto v = read_int(ctx_, n, owner + ": ports", 1, 4096, "64"))
      base.ports = static_cast<int>(*v);
  if (const auto n = m.get("port_gbps"); n.IsDefined())
    if (const auto v = read_number(ctx_, n, owner + ": port_gbps", 0, 1e6)) base.port_gbps = *v;
  // A switch's own snmp replaces the defaults' as a whole: access is one decision per switch.
  base.snmp = inv_.defaults.snmp;
  if (const auto n = m.get("snmp"); n.IsDefined()) base.snmp = read_snmp(ctx_, n, owner);
  read_switch_control(m, owner, base);
  const Zipped racks = zip(ctx_, m.get("rack"), owner + ": rack", count, count_source);
  all_valid(ctx_, m.get("rack"), racks, is_valid_name, owner + ": rack", name_rule);
  const Zipped addresses = zip(ctx_, m.get("address"), owner + ": address", count, count_source);
  all_valid(ctx_, m.get("address"), addresses, is_valid_address, owner + ": address",
            "give an IP address or a DNS name");
  const Zipped netns = zip(ctx_, m.get("netns"), owner + ": netns", count, count_source);
  all_valid(ctx_, m.get("netns"), netns, is_valid_name, owner + ": netns", name_rule);
  for (std::size_t i = 0; i < count; ++i) {
    Switch s = base;
    s.name = names.values[i];
    if (!racks.values.empty()) s.rack = racks.values[i];
    if (!addresses.values.empty()) s.address = addresses.values[i];
    if (!netns.values.empty()) s.netns = netns.values[i];
    claim_node_name(s.name, name_node, "switch");
    if (!s.rack.empty()) switch_racks_.push_back({m.get("rack"), s.name, s.rack});
    inv_.switches.push_back(std::move(s));
  }
}

std::optional<LinkEnd> Loader::link_end(const YAML::Node& n, const std::string& what) {
  const auto v = read_string(ctx_, n, what);
  if (!v) return std::nullopt;
  const auto colon = v->find(':');
  const std::string node = v->substr(0, colon);
  const std::string port = colon == std::string::npos ? "" : v->substr(colon + 1);
  const bool port_ok =
      !port.empty() && port.size() <= 64 && std::all_of(port.begin(), port.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) ||
               std::string_view("._/:@-").find(c) != std::string_view::npos;
      });
  if (colon == std::string::npos || !is_valid_name(node) || !port_ok) {
    ctx_.error(n, fmt::format("{} '{}' is not NODE:PORT; write the host or switch name and its "
                              "port, e.g. leaf01:Ethernet1/1",
                              what, shown(*v)));
    return std::nullopt;
  }
  if (!node_names_.count(node)) {
    ctx_.error(n, fmt::format("{}: '{}' is neither a host nor a switch; add it, or correct the "
                              "name",
                              what, shown(node)));
    return std::nullopt;
  }
  return LinkEnd{node, port};
}

void Loader::read_link(const YAML::Node& entry) {
  const MapReader m(ctx_, entry, "link entry", {"name", "a", "b", "gbps"});
  if (!m.ok()) return;
  const YAML::Node name_node = m.require("name", "leaf01-spine01");
  const YAML::Node a = m.require("a", "leaf01:Ethernet1/1");
  const YAML::Node b = m.require("b", "spine01:Ethernet1/1");
  const auto name = read_entry_name(ctx_, name_node, "link");
  if (!name) return;
  const std::string owner = fmt::format("link '{}'", *name);
  Link link;
  link.name = *name;
  link.where = location_of(name_node);
  if (a.IsDefined())
    if (const auto e = link_end(a, owner + ": a")) link.a = *e;
  if (b.IsDefined())
    if (const auto e = link_end(b, owner + ": b")) link.b = *e;
  if (const auto g = m.get("gbps"); g.IsDefined())
    if (const auto v = read_number(ctx_, g, owner + ": gbps", 0, 1e6)) link.gbps = *v;
  if (const auto [it, fresh] = link_names_.try_emplace(link.name, link.where.line); !fresh)
    ctx_.error(name_node, fmt::format("link '{}' is defined twice (also at line {}); give each "
                                      "link its own name",
                                      *name, it->second));
  inv_.links.push_back(std::move(link));
}

void Loader::read_rack(const YAML::Node& entry) {
  const MapReader m(ctx_, entry, "rack entry", {"name", "leaf", "hosts"});
  if (!m.ok()) return;
  const YAML::Node name_node = m.require("name", "r01");
  const auto name = read_entry_name(ctx_, name_node, "rack");
  if (!name) return;
  const std::string owner = fmt::format("rack '{}'", *name);
  Rack rack;
  rack.name = *name;
  rack.where = location_of(name_node);
  if (const auto [it, fresh] = rack_names_.try_emplace(rack.name, rack.where.line); !fresh)
    ctx_.error(name_node, fmt::format("rack '{}' is defined twice (also at line {}); give each "
                                      "rack its own name",
                                      *name, it->second));
  if (const auto leaf = m.get("leaf"); leaf.IsDefined())
    if (const auto v = read_string(ctx_, leaf, owner + ": leaf")) {
      const Switch* s = inv_.find_switch(*v);
      if (!inv_.switches.empty() && !s)
        ctx_.error(leaf, fmt::format("{}: leaf '{}' is not in switches; add it there, or "
                                     "correct the name",
                                     owner, shown(*v)));
      else
        rack.leaf = *v;
    }
  if (const auto hosts = m.get("hosts"); hosts.IsDefined())
    if (const auto items = read_string_list(ctx_, hosts, owner + ": hosts")) {
      std::size_t i = 0;
      for (const auto& item : *items) {
        const YAML::Node at = hosts[i++];
        RangeExpansion e = expand_range(item, max_hosts);
        if (!e.error.empty()) {
          ctx_.error(at, fmt::format("{}: hosts: {}", owner, e.error));
          continue;
        }
        for (const auto& host : e.values) add_to_rack(rack, host, at, owner);
      }
    }
  rack_index_.try_emplace(rack.name, inv_.racks.size());
  inv_.racks.push_back(std::move(rack));
}

void Loader::add_to_rack(Rack& rack, const std::string& host_name, const YAML::Node& at,
                         const std::string& owner) {
  const auto found = host_index_.find(host_name);
  Host* host = found == host_index_.end() ? nullptr : &inv_.hosts[found->second];
  if (!host) {
    ctx_.error(at, fmt::format("{}: host '{}' is not in hosts; add it there, or correct the "
                               "name",
                               owner, shown(host_name)));
    return;
  }
  if (const auto [it, fresh] = host_rack_.try_emplace(host_name, rack.name); !fresh) {
    ctx_.error(at, fmt::format("{}: host '{}' is already in rack '{}'; a host is in one rack",
                               owner, host_name, it->second));
    return;
  }
  if (!host->rack.empty() && host->rack != rack.name) {
    ctx_.error(at, fmt::format("{}: host '{}' says its rack is '{}'; make the two agree", owner,
                               host_name, host->rack));
    return;
  }
  host->rack = rack.name;
  rack.hosts.push_back(host_name);
}

void Loader::check_host_racks() {
  if (inv_.racks.empty()) {
    // Racks named only by hosts: the implicit rack list, in order of first mention.
    for (const auto& h : inv_.hosts) {
      if (h.rack.empty()) continue;
      Rack* rack = find_rack(h.rack);
      if (!rack) {
        rack_index_.emplace(h.rack, inv_.racks.size());
        inv_.racks.push_back(Rack{h.rack, "", {}, h.where});
        rack = &inv_.racks.back();
      }
      rack->hosts.push_back(h.name);
    }
    return;
  }
  for (auto& h : inv_.hosts) {
    if (h.rack.empty() || host_rack_.count(h.name)) continue;
    if (Rack* r = find_rack(h.rack))
      r->hosts.push_back(h.name);
    else
      ctx_.error(h.where, fmt::format("host '{}': rack '{}' is not in racks; add it to racks, or "
                                      "correct the name",
                                      h.name, shown(h.rack)));
  }
  for (const auto& [at, switch_name, rack] : switch_racks_)
    if (!find_rack(rack))
      ctx_.error(at, fmt::format("switch '{}': rack '{}' is not in racks; add it to racks, or "
                                 "correct the name",
                                 switch_name, shown(rack)));
}

Rack* Loader::find_rack(const std::string& name) {
  const auto it = rack_index_.find(name);
  return it == rack_index_.end() ? nullptr : &inv_.racks[it->second];
}

void Loader::check_nic_links() {
  if (inv_.links.empty()) return;
  for (const auto& [at, what] : nic_links_) {
    // Already checked as a value (and as a range of the entry's size) when the NIC was read.
    if (!at.IsScalar()) continue;
    RangeExpansion e = expand_range(at.Scalar(), max_hosts);
    for (const auto& name : e.values)
      if (!link_names_.count(name)) {
        ctx_.error(at, fmt::format("{}: link '{}' is not in links; add it there, or correct the "
                                   "name",
                                   what, shown(name)));
        break;
      }
  }
}

}  // namespace rocehil::inventory::detail
