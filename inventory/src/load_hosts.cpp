// Host entries and their NICs, ranges expanded in lockstep.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>

#include "loader.hpp"
#include "rocehil/inventory/names.hpp"
#include "rocehil/inventory/range.hpp"

namespace rocehil::inventory::detail {

void Loader::read_host(const YAML::Node& entry) {
  const MapReader m(ctx_, entry, "host entry",
                    {"name", "address", "ssh", "agent", "provider", "launcher", "rack", "labels",
                     "netns", "nics", "settings", "commands"});
  if (!m.ok()) return;
  const YAML::Node name_node = m.require("name", "gpu001");
  if (!name_node.IsDefined()) return;
  const auto name_text = read_string(ctx_, name_node, "host name");
  if (!name_text) return;
  RangeExpansion names = expand_range(*name_text, max_hosts);
  if (!names.error.empty()) {
    ctx_.error(name_node, "host name " + names.error);
    return;
  }
  for (const auto& n : names.values)
    if (!is_valid_name(n)) {
      ctx_.error(name_node,
                 fmt::format("host name '{}' is not a valid name; {}", shown(n), name_rule));
      return;
    }
  if (inv_.hosts.size() + names.values.size() > max_hosts) {
    ctx_.error(name_node, fmt::format("more than {} hosts; split the inventory", max_hosts));
    return;
  }
  const std::size_t count = names.values.size();
  const std::string owner = names.had_range ? fmt::format("host entry '{}'", shown(*name_text))
                                            : fmt::format("host '{}'", shown(*name_text));
  const std::string count_source = fmt::format("the name '{}'", shown(*name_text));

  Host base;
  base.ssh = inv_.defaults.ssh;
  base.agent = inv_.defaults.agent;
  base.provider = inv_.defaults.provider;
  base.launcher = inv_.defaults.launcher;
  base.where = location_of(name_node);
  base.settings = inv_.defaults.settings;
  if (const auto s = m.get("settings"); s.IsDefined())
    base.settings =
        settings::merge(base.settings, read_settings_map(ctx_, s, owner + ": settings"));
  if (const auto s = m.get("ssh"); s.IsDefined()) {
    const auto defaults_options = base.ssh.options;
    base.ssh.options.clear();
    read_ssh(ctx_, s, owner, base.ssh);
    base.ssh.options.insert(base.ssh.options.begin(), defaults_options.begin(),
                            defaults_options.end());
  }
  if (const auto a = m.get("agent"); a.IsDefined())
    if (const auto v = read_agent(ctx_, a, owner + ": agent")) base.agent = *v;
  if (const auto c = m.get("commands"); c.IsDefined())
    base.commands = read_commands(ctx_, c, owner);
  if (const auto p = m.get("provider"); p.IsDefined())
    if (const auto v = read_provider(ctx_, p, owner + ": provider")) base.provider = *v;
  if (const auto l = m.get("launcher"); l.IsDefined())
    if (const auto v = read_choice(ctx_, l, owner + ": launcher", {"ssh", "local", "slurm"}))
      base.launcher = *launcher_named(*v);
  if (const auto l = m.get("labels"); l.IsDefined())
    if (const auto v = read_string_list(ctx_, l, owner + ": labels")) {
      for (const auto& label : *v)
        if (!is_valid_name(label))
          ctx_.error(l, fmt::format("{}: label '{}' is not a valid name; {}", owner, shown(label),
                                    name_rule));
        else
          base.labels.push_back(label);
    }

  const YAML::Node address_node = m.get("address");
  const Zipped addresses = zip(ctx_, address_node, owner + ": address", count, count_source);
  all_valid(ctx_, address_node, addresses, is_valid_address, owner + ": address",
            "give an IP address or a DNS name (letters, digits, '-' and dots)");
  const Zipped racks = zip(ctx_, m.get("rack"), owner + ": rack", count, count_source);
  all_valid(ctx_, m.get("rack"), racks, is_valid_name, owner + ": rack", std::string(name_rule));
  const Zipped netns = zip(ctx_, m.get("netns"), owner + ": netns", count, count_source);
  all_valid(ctx_, m.get("netns"), netns, is_valid_name, owner + ": netns", std::string(name_rule));

  std::vector<std::vector<Nic>> nics(count);
  if (const auto n = m.get("nics"); n.IsDefined() && !n.IsNull()) {
    if (!n.IsSequence()) {
      ctx_.error(n,
                 fmt::format("{}: nics must be a list of NICs ('- device: mlx5_0'), or []", owner));
    } else {
      for (const auto& nic : n)
        read_nic(nic, owner, names.values.front(), base.provider, count, count_source, nics);
    }
  }

  for (std::size_t i = 0; i < count; ++i) {
    Host h = base;
    h.name = names.values[i];
    h.address =
        addresses.values.empty() || addresses.values[i].empty() ? h.name : addresses.values[i];
    if (!racks.values.empty()) h.rack = racks.values[i];
    if (!netns.values.empty()) h.netns = netns.values[i];
    h.nics = std::move(nics[i]);
    claim_node_name(h.name, name_node, "host");
    check_host_duplicates(h, name_node, address_node);
    host_index_.try_emplace(h.name, inv_.hosts.size());
    inv_.hosts.push_back(std::move(h));
  }
}

void Loader::check_host_duplicates(const Host& h, const YAML::Node& name_node,
                                   const YAML::Node& address_node) {
  const std::string key = h.address + ":" + std::to_string(h.ssh.port) + ":" + h.ssh.jump;
  const auto [it, fresh] = addresses_.try_emplace(key, h.name, location_of(name_node).line);
  if (!fresh && it->second.first != h.name)
    ctx_.error(
        address_node.IsDefined() ? address_node : name_node,
        fmt::format("host '{}': address {} is also host '{}''s (line {}); each host "
                    "needs its own address",
                    shown(h.name), shown(h.address), shown(it->second.first), it->second.second));
  std::set<std::string> netdevs, devices;
  for (const Nic& nic : h.nics) {
    if (!nic.ip.empty()) {
      const auto [ip, ip_fresh] = nic_ips_.try_emplace(nic.ip, h.name, nic.where.line);
      if (!ip_fresh)
        ctx_.error(nic.where,
                   fmt::format("host '{}': nic ip {} is also used by host '{}' (line "
                               "{}); every NIC needs its own address",
                               shown(h.name), nic.ip, shown(ip->second.first), ip->second.second));
    }
    if (!nic.netdev.empty() && !netdevs.insert(nic.netdev).second)
      ctx_.error(nic.where, fmt::format("host '{}': netdev {} is listed twice; list each NIC "
                                        "once",
                                        shown(h.name), nic.netdev));
    if (!nic.device.empty() && !devices.insert(nic.device + "/" + std::to_string(nic.port)).second)
      ctx_.error(nic.where, fmt::format("host '{}': {} port {} is listed twice; list each port "
                                        "once",
                                        shown(h.name), nic.device, nic.port));
  }
}

void Loader::read_nic(const YAML::Node& entry, const std::string& owner, std::string_view host_hint,
                      Provider provider, std::size_t count, const std::string& count_source,
                      std::vector<std::vector<Nic>>& out) {
  const std::size_t index = out.empty() ? 0 : out.front().size();
  const std::string what = fmt::format("{}: nic {}", owner, index + 1);
  const MapReader m(ctx_, entry, what,
                    {"device", "port", "gid_index", "netdev", "ip", "link_gbps", "mtu", "numa",
                     "gpu", "rail", "link"});
  if (!m.ok()) return;
  Nic base;
  base.port = inv_.defaults.port;
  base.gid_index = inv_.defaults.gid_index;
  base.link_gbps = inv_.defaults.link_gbps;
  base.where = location_of(entry);
  bool ok = true;
  const auto int_field = [&](const char* key, long lo, long hi, const char* example, int& into) {
    if (const auto n = m.get(key); n.IsDefined()) {
      if (const auto v = read_int(ctx_, n, what + ": " + key, lo, hi, example))
        into = static_cast<int>(*v);
      else
        ok = false;
    }
  };
  int_field("port", 1, 255, "1", base.port);
  if (const auto g = m.get("gid_index"); g.IsDefined()) {
    if (const auto v = gid_index(g, what, host_hint))
      base.gid_index = *v;
    else
      ok = false;
  }
  int_field("mtu", 68, 65535, "9000", base.mtu);
  int_field("numa", 0, 63, "0", base.numa);
  int_field("gpu", 0, 1023, "0", base.gpu);
  int_field("rail", 0, 63, "0", base.rail);
  if (const auto g = m.get("link_gbps"); g.IsDefined()) {
    if (const auto v = read_number(ctx_, g, what + ": link_gbps", 0, 1e6))
      base.link_gbps = *v;
    else
      ok = false;
  }
  const auto zipped = [&](const char* key, bool (*valid)(std::string_view), std::string_view rule) {
    const YAML::Node n = m.get(key);
    Zipped z = zip(ctx_, n, what + ": " + key, count, count_source);
    if (!z.ok || !all_valid(ctx_, n, z, valid, what + ": " + key, rule)) ok = false;
    return z;
  };
  const Zipped device = zipped("device", is_valid_rdma_device,
                               "name the RDMA device as /sys/class/infiniband does (mlx5_0)");
  const Zipped netdev =
      zipped("netdev", is_valid_netdev, "name the interface as 'ip link' does (ens1f0np0)");
  const Zipped ip = zipped("ip", is_ip_address, "give the IPv4 or IPv6 address RoCE uses");
  const Zipped link = zipped("link", is_valid_name, name_rule);
  if (!ok) return;
  if (!m.has("device") && !m.has("netdev")) {
    ctx_.error(entry, fmt::format("{} has neither 'device' nor 'netdev'; name the RDMA device "
                                  "(mlx5_0) or the interface (ens1f0np0)",
                                  what));
    return;
  }
  if (provider == Provider::verbs && !m.has("device")) {
    ctx_.error(entry, fmt::format("{} has no 'device': the verbs provider needs the RDMA device "
                                  "(e.g. mlx5_0); add 'device', or set 'provider: soft' for "
                                  "this host",
                                  what));
    return;
  }
  if (m.has("link")) nic_links_.push_back({m.get("link"), what});
  for (std::size_t i = 0; i < count; ++i) {
    Nic nic = base;
    nic.device = device.values[i];
    nic.netdev = netdev.values[i];
    nic.ip = ip.values[i];
    nic.link = link.values[i];
    out[i].push_back(std::move(nic));
  }
}

}  // namespace rocehil::inventory::detail
