// Reading an inventory: YAML in, a validated Inventory or every problem out. Sections are read
// in dependency order (hosts and switches, then links, racks and captures that refer to them)
// whatever their order in the file; diagnostics are sorted by place at the end.
#include "rocehil/inventory/load.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "load_context.hpp"
#include "rocehil/common/error.hpp"
#include "rocehil/inventory/names.hpp"
#include "rocehil/inventory/range.hpp"

namespace rocehil::inventory {

using detail::LoadContext;
using detail::MapReader;
using detail::shown;

namespace {

constexpr std::size_t max_hosts = 65536;
constexpr std::size_t max_text = std::size_t{64} << 20;
constexpr int max_nesting = 64;

constexpr std::string_view name_rule =
    "use letters, digits, '.', '_' and '-' (at most 63), starting with a letter or digit";

// A value of a range entry: the values it stands for, one per host of the entry.
struct Zipped {
  std::vector<std::string> values;
  bool ok = true;
};

// Expands `node` (absent: empty strings) to `count` values: no range means the same value for
// every host; a range must have exactly `count` values.
Zipped zip(LoadContext& ctx, const YAML::Node& node, std::string_view what, std::size_t count,
           std::string_view count_source) {
  Zipped z;
  if (!node.IsDefined()) {
    z.values.assign(count, "");
    return z;
  }
  const auto text = detail::read_string(ctx, node, what);
  if (!text) {
    z.ok = false;
    return z;
  }
  RangeExpansion e = expand_range(*text, max_hosts);
  if (!e.error.empty()) {
    ctx.error(node, fmt::format("{}: {}", what, e.error));
    z.ok = false;
    return z;
  }
  if (!e.had_range) {
    z.values.assign(count, *text);
    return z;
  }
  if (e.values.size() != count) {
    ctx.error(node, fmt::format("{} '{}' has {} values but {} has {}; give it a range of {} "
                                "values, or one value for all",
                                what, shown(*text), e.values.size(), count_source, count, count));
    z.ok = false;
    return z;
  }
  z.values = std::move(e.values);
  return z;
}

// Checks every expanded value with `valid`; reports the first bad one only, so one typo in a
// 128-host entry is one message.
bool all_valid(LoadContext& ctx, const YAML::Node& node, const Zipped& z,
               bool (*valid)(std::string_view), std::string_view what, std::string_view rule) {
  for (const auto& v : z.values)
    if (!v.empty() && !valid(v)) {
      ctx.error(node, fmt::format("{} '{}' is not valid; {}", what, shown(v), rule));
      return false;
    }
  return true;
}

bool nesting_too_deep(std::string_view text) {
  int depth = 0;
  for (const char c : text) {
    if (c == '[' || c == '{') {
      if (++depth > max_nesting) return true;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return false;
}

void read_ssh(LoadContext& ctx, const YAML::Node& node, const std::string& owner,
              SshSettings& ssh) {
  const MapReader m(
      ctx, node, owner + " ssh settings",
      {"user", "port", "identity", "known_hosts", "jump", "options", "connect_timeout_s"});
  if (!m.ok()) return;
  const auto field = [&](std::string_view key) { return owner + ": ssh " + std::string(key); };
  if (const auto n = m.get("user"); n.IsDefined())
    if (const auto v = detail::read_string(ctx, n, field("user"))) {
      if (is_valid_user(*v))
        ssh.user = *v;
      else
        ctx.error(n, fmt::format("{} '{}' is not a login name; use letters, digits, '_', '.' and "
                                 "'-'",
                                 field("user"), shown(*v)));
    }
  if (const auto n = m.get("port"); n.IsDefined())
    if (const auto v = detail::read_int(ctx, n, field("port"), 1, 65535, "22"))
      ssh.port = static_cast<int>(*v);
  for (const char* key : {"identity", "known_hosts"}) {
    const auto n = m.get(key);
    if (!n.IsDefined()) continue;
    const auto v = detail::read_string(ctx, n, field(key));
    if (!v) continue;
    if (!is_valid_local_path(*v))
      ctx.error(n, fmt::format("{} '{}' is not a usable path; give an absolute path or one "
                               "starting with ~/ (letters, digits and . _ / + @ % , = : ~ -)",
                               field(key), shown(*v)));
    else
      (std::string_view(key) == "identity" ? ssh.identity : ssh.known_hosts) = *v;
  }
  if (const auto n = m.get("jump"); n.IsDefined())
    if (const auto v = detail::read_string(ctx, n, field("jump"))) {
      if (is_valid_jump(*v))
        ssh.jump = *v;
      else
        ctx.error(n, fmt::format("{} '{}' is not [user@]host[:port]; name the jump host as ssh -J "
                                 "takes it",
                                 field("jump"), shown(*v)));
    }
  if (const auto n = m.get("options"); n.IsDefined())
    if (const auto v = detail::read_string_list(ctx, n, field("options"))) {
      std::size_t i = 0;
      for (const auto& option : *v) {
        if (is_valid_ssh_option(option))
          ssh.options.push_back(option);
        else
          ctx.error(n[i], fmt::format("{} '{}' is not allowed; give Key=Value without spaces or "
                                      "shell characters, and no option that runs a command "
                                      "(ProxyCommand, LocalCommand...: use 'jump')",
                                      field("options"), shown(option)));
        ++i;
      }
    }
  if (const auto n = m.get("connect_timeout_s"); n.IsDefined())
    if (const auto v = detail::read_int(ctx, n, field("connect_timeout_s"), 1, 300, "10"))
      ssh.connect_timeout_s = static_cast<int>(*v);
}

std::optional<Provider> read_provider(LoadContext& ctx, const YAML::Node& n,
                                      std::string_view what) {
  const auto v = detail::read_choice(ctx, n, what, {"soft", "verbs"});
  if (!v) return std::nullopt;
  return *v == "soft" ? Provider::soft : Provider::verbs;
}

std::optional<std::string> read_agent(LoadContext& ctx, const YAML::Node& n,
                                      std::string_view what) {
  const auto v = detail::read_string(ctx, n, what);
  if (!v) return std::nullopt;
  if (is_valid_agent_path(*v)) return v;
  ctx.error(n, fmt::format("{} '{}' is not usable; give an absolute path (/usr/local/bin/rocehil) "
                           "or a command name on the host's PATH",
                           what, shown(*v)));
  return std::nullopt;
}

class Loader {
 public:
  explicit Loader(LoadContext& ctx) : ctx_(ctx) {}

  std::optional<Inventory> load(const YAML::Node& root) {
    const MapReader top(
        ctx_, root, "the inventory",
        {"schema_version", "name", "defaults", "hosts", "racks", "switches", "links", "captures"});
    if (!top.ok()) return std::nullopt;
    const auto version = top.require("schema_version", "1");
    if (version.IsDefined())
      if (const auto v = detail::read_int(ctx_, version, "schema_version", 1, 1000000, "1");
          v && *v != 1)
        ctx_.error(version, fmt::format("schema_version {} is not supported; this rocehil reads "
                                        "schema_version 1",
                                        *v));
    if (const auto n = top.get("name"); n.IsDefined())
      if (const auto v = detail::read_string(ctx_, n, "name")) inv_.name = shown(*v);
    if (const auto n = top.get("defaults"); n.IsDefined()) read_defaults(n);
    const auto hosts = top.require("hosts", "[{name: h1, address: 10.0.0.1}]");
    if (hosts.IsDefined()) read_list(hosts, "hosts", [&](const YAML::Node& h) { read_host(h); });
    if (const auto n = top.get("switches"); n.IsDefined())
      read_list(n, "switches", [&](const YAML::Node& s) { read_switch(s); });
    if (const auto n = top.get("links"); n.IsDefined())
      read_list(n, "links", [&](const YAML::Node& l) { read_link(l); });
    if (const auto n = top.get("racks"); n.IsDefined())
      read_list(n, "racks", [&](const YAML::Node& r) { read_rack(r); });
    check_host_racks();
    check_nic_links();
    if (const auto n = top.get("captures"); n.IsDefined())
      read_list(n, "captures", [&](const YAML::Node& c) { read_capture(c); });
    return inv_;
  }

 private:
  template <typename ReadOne>
  void read_list(const YAML::Node& n, std::string_view what, ReadOne read_one) {
    if (n.IsNull()) return;
    if (!n.IsSequence()) {
      ctx_.error(n, fmt::format("{} must be a list of entries ('- name: ...'), not a single value "
                                "or a map",
                                what));
      return;
    }
    for (const auto& entry : n) read_one(entry);
  }

  void read_defaults(const YAML::Node& n) {
    const MapReader m(ctx_, n, "defaults",
                      {"ssh", "agent", "provider", "link_gbps", "gid_index", "port"});
    if (!m.ok()) return;
    Defaults& d = inv_.defaults;
    if (const auto s = m.get("ssh"); s.IsDefined()) read_ssh(ctx_, s, "defaults", d.ssh);
    if (const auto a = m.get("agent"); a.IsDefined())
      if (const auto v = read_agent(ctx_, a, "defaults: agent")) d.agent = *v;
    if (const auto p = m.get("provider"); p.IsDefined())
      if (const auto v = read_provider(ctx_, p, "defaults: provider")) d.provider = *v;
    if (const auto g = m.get("link_gbps"); g.IsDefined())
      if (const auto v = detail::read_number(ctx_, g, "defaults: link_gbps", 0, 1e6))
        d.link_gbps = *v;
    if (const auto g = m.get("gid_index"); g.IsDefined())
      if (const auto v = gid_index(g, "defaults")) d.gid_index = *v;
    if (const auto p = m.get("port"); p.IsDefined())
      if (const auto v = detail::read_int(ctx_, p, "defaults: port", 1, 255, "1"))
        d.port = static_cast<int>(*v);
  }

  // `host` names the host in the hint; a default has none yet.
  std::optional<int> gid_index(const YAML::Node& n, const std::string& owner,
                               std::string_view host = "HOST") {
    if (!n.IsScalar()) {
      detail::read_int(ctx_, n, owner + ": gid_index", 0, 255, "3");
      return std::nullopt;
    }
    long v = 0;
    const std::string& s = n.Scalar();
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec == std::errc() && end == s.data() + s.size() && (v < 0 || v > 255)) {
      ctx_.error(n, fmt::format("{}: gid_index {} is out of range; use 0-255 (a port's GID table "
                                "has at most 256 entries; 'rocehil inventory discover {}' lists "
                                "them)",
                                owner, v, host));
      return std::nullopt;
    }
    const auto checked = detail::read_int(ctx_, n, owner + ": gid_index", 0, 255, "3");
    if (!checked) return std::nullopt;
    return static_cast<int>(*checked);
  }

  // A name of a host or a switch, which share one namespace because link ends name either.
  void claim_node_name(const std::string& name, const YAML::Node& at, std::string_view kind) {
    const auto [it, fresh] = node_names_.try_emplace(name, location_of_str(at, kind));
    if (!fresh)
      ctx_.error(at, fmt::format("{} '{}' is defined twice (the other is the {} at line {}); give "
                                 "each its own name",
                                 kind, shown(name), it->second.kind, it->second.line));
  }

  struct Claim {
    int line = 0;
    std::string kind;
  };
  static Claim location_of_str(const YAML::Node& at, std::string_view kind) {
    return {detail::location_of(at).line, std::string(kind)};
  }

  void read_host(const YAML::Node& entry) {
    const MapReader m(
        ctx_, entry, "host entry",
        {"name", "address", "ssh", "agent", "provider", "rack", "labels", "netns", "nics"});
    if (!m.ok()) return;
    const YAML::Node name_node = m.require("name", "gpu001");
    if (!name_node.IsDefined()) return;
    const auto name_text = detail::read_string(ctx_, name_node, "host name");
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
    base.where = detail::location_of(name_node);
    if (const auto s = m.get("ssh"); s.IsDefined()) {
      const auto defaults_options = base.ssh.options;
      base.ssh.options.clear();
      read_ssh(ctx_, s, owner, base.ssh);
      base.ssh.options.insert(base.ssh.options.begin(), defaults_options.begin(),
                              defaults_options.end());
    }
    if (const auto a = m.get("agent"); a.IsDefined())
      if (const auto v = read_agent(ctx_, a, owner + ": agent")) base.agent = *v;
    if (const auto p = m.get("provider"); p.IsDefined())
      if (const auto v = read_provider(ctx_, p, owner + ": provider")) base.provider = *v;
    if (const auto l = m.get("labels"); l.IsDefined())
      if (const auto v = detail::read_string_list(ctx_, l, owner + ": labels")) {
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
    all_valid(ctx_, m.get("netns"), netns, is_valid_name, owner + ": netns",
              std::string(name_rule));

    std::vector<std::vector<Nic>> nics(count);
    if (const auto n = m.get("nics"); n.IsDefined() && !n.IsNull()) {
      if (!n.IsSequence()) {
        ctx_.error(
            n, fmt::format("{}: nics must be a list of NICs ('- device: mlx5_0'), or []", owner));
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
      inv_.hosts.push_back(std::move(h));
    }
  }

  void check_host_duplicates(const Host& h, const YAML::Node& name_node,
                             const YAML::Node& address_node) {
    const std::string key = h.address + ":" + std::to_string(h.ssh.port) + ":" + h.ssh.jump;
    const auto [it, fresh] =
        addresses_.try_emplace(key, h.name, detail::location_of(name_node).line);
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
          ctx_.error(nic.where, fmt::format("host '{}': nic ip {} is also used by host '{}' (line "
                                            "{}); every NIC needs its own address",
                                            shown(h.name), nic.ip, shown(ip->second.first),
                                            ip->second.second));
      }
      if (!nic.netdev.empty() && !netdevs.insert(nic.netdev).second)
        ctx_.error(nic.where, fmt::format("host '{}': netdev {} is listed twice; list each NIC "
                                          "once",
                                          shown(h.name), nic.netdev));
      if (!nic.device.empty() &&
          !devices.insert(nic.device + "/" + std::to_string(nic.port)).second)
        ctx_.error(nic.where, fmt::format("host '{}': {} port {} is listed twice; list each port "
                                          "once",
                                          shown(h.name), nic.device, nic.port));
    }
  }

  void read_nic(const YAML::Node& entry, const std::string& owner, std::string_view host_hint,
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
    base.where = detail::location_of(entry);
    bool ok = true;
    const auto int_field = [&](const char* key, long lo, long hi, const char* example, int& into) {
      if (const auto n = m.get(key); n.IsDefined()) {
        if (const auto v = detail::read_int(ctx_, n, what + ": " + key, lo, hi, example))
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
      if (const auto v = detail::read_number(ctx_, g, what + ": link_gbps", 0, 1e6))
        base.link_gbps = *v;
      else
        ok = false;
    }
    const auto zipped = [&](const char* key, bool (*valid)(std::string_view),
                            std::string_view rule) {
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

  void read_switch(const YAML::Node& entry) {
    const MapReader m(ctx_, entry, "switch entry",
                      {"name", "role", "rack", "address", "ports", "port_gbps", "netns"});
    if (!m.ok()) return;
    const YAML::Node name_node = m.require("name", "leaf01");
    const YAML::Node role_node = m.require("role", "leaf");
    if (!name_node.IsDefined()) return;
    const auto name_text = detail::read_string(ctx_, name_node, "switch name");
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
    base.where = detail::location_of(name_node);
    if (role_node.IsDefined())
      if (const auto v = detail::read_choice(ctx_, role_node, owner + ": role",
                                             {"leaf", "spine", "superspine", "other"}))
        base.role = *v;
    if (const auto n = m.get("ports"); n.IsDefined())
      if (const auto v = detail::read_int(ctx_, n, owner + ": ports", 1, 4096, "64"))
        base.ports = static_cast<int>(*v);
    if (const auto n = m.get("port_gbps"); n.IsDefined())
      if (const auto v = detail::read_number(ctx_, n, owner + ": port_gbps", 0, 1e6))
        base.port_gbps = *v;
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

  std::optional<LinkEnd> link_end(const YAML::Node& n, const std::string& what) {
    const auto v = detail::read_string(ctx_, n, what);
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

  void read_link(const YAML::Node& entry) {
    const MapReader m(ctx_, entry, "link entry", {"name", "a", "b", "gbps"});
    if (!m.ok()) return;
    const YAML::Node name_node = m.require("name", "leaf01-spine01");
    const YAML::Node a = m.require("a", "leaf01:Ethernet1/1");
    const YAML::Node b = m.require("b", "spine01:Ethernet1/1");
    if (!name_node.IsDefined()) return;
    const auto name = detail::read_string(ctx_, name_node, "link name");
    if (!name) return;
    if (!is_valid_name(*name)) {
      ctx_.error(name_node,
                 fmt::format("link name '{}' is not a valid name; {}", shown(*name), name_rule));
      return;
    }
    const std::string owner = fmt::format("link '{}'", *name);
    Link link;
    link.name = *name;
    link.where = detail::location_of(name_node);
    if (a.IsDefined())
      if (const auto e = link_end(a, owner + ": a")) link.a = *e;
    if (b.IsDefined())
      if (const auto e = link_end(b, owner + ": b")) link.b = *e;
    if (const auto g = m.get("gbps"); g.IsDefined())
      if (const auto v = detail::read_number(ctx_, g, owner + ": gbps", 0, 1e6)) link.gbps = *v;
    if (const auto [it, fresh] = link_names_.try_emplace(link.name, link.where.line); !fresh)
      ctx_.error(name_node, fmt::format("link '{}' is defined twice (also at line {}); give each "
                                        "link its own name",
                                        *name, it->second));
    inv_.links.push_back(std::move(link));
  }

  void read_rack(const YAML::Node& entry) {
    const MapReader m(ctx_, entry, "rack entry", {"name", "leaf", "hosts"});
    if (!m.ok()) return;
    const YAML::Node name_node = m.require("name", "r01");
    if (!name_node.IsDefined()) return;
    const auto name = detail::read_string(ctx_, name_node, "rack name");
    if (!name) return;
    if (!is_valid_name(*name)) {
      ctx_.error(name_node,
                 fmt::format("rack name '{}' is not a valid name; {}", shown(*name), name_rule));
      return;
    }
    const std::string owner = fmt::format("rack '{}'", *name);
    Rack rack;
    rack.name = *name;
    rack.where = detail::location_of(name_node);
    if (const auto [it, fresh] = rack_names_.try_emplace(rack.name, rack.where.line); !fresh)
      ctx_.error(name_node, fmt::format("rack '{}' is defined twice (also at line {}); give each "
                                        "rack its own name",
                                        *name, it->second));
    if (const auto leaf = m.get("leaf"); leaf.IsDefined())
      if (const auto v = detail::read_string(ctx_, leaf, owner + ": leaf")) {
        const Switch* s = inv_.find_switch(*v);
        if (!inv_.switches.empty() && !s)
          ctx_.error(leaf, fmt::format("{}: leaf '{}' is not in switches; add it there, or "
                                       "correct the name",
                                       owner, shown(*v)));
        else
          rack.leaf = *v;
      }
    if (const auto hosts = m.get("hosts"); hosts.IsDefined())
      if (const auto items = detail::read_string_list(ctx_, hosts, owner + ": hosts")) {
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
    inv_.racks.push_back(std::move(rack));
  }

  void add_to_rack(Rack& rack, const std::string& host_name, const YAML::Node& at,
                   const std::string& owner) {
    Host* host = nullptr;
    for (auto& h : inv_.hosts)
      if (h.name == host_name) host = &h;
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

  void check_host_racks() {
    if (inv_.racks.empty()) {
      // Racks named only by hosts: the implicit rack list, in order of first mention.
      for (const auto& h : inv_.hosts) {
        if (h.rack.empty()) continue;
        Rack* rack = nullptr;
        for (auto& r : inv_.racks)
          if (r.name == h.rack) rack = &r;
        if (!rack) {
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

  Rack* find_rack(const std::string& name) {
    for (auto& r : inv_.racks)
      if (r.name == name) return &r;
    return nullptr;
  }

  void check_nic_links() {
    if (inv_.links.empty()) return;
    for (const auto& [at, what] : nic_links_) {
      const Zipped z = zip(ctx_, at, what + ": link", 1, "");
      if (!at.IsScalar()) continue;
      RangeExpansion e = expand_range(at.Scalar(), max_hosts);
      for (const auto& name : e.values)
        if (!link_names_.count(name)) {
          ctx_.error(at, fmt::format("{}: link '{}' is not in links; add it there, or correct the "
                                     "name",
                                     what, shown(name)));
          break;
        }
      (void)z;
    }
  }

  void read_capture(const YAML::Node& entry) {
    const MapReader m(
        ctx_, entry, "capture entry",
        {"name", "host", "backend", "interface", "dpdk_args", "link_gbps", "mirrors"});
    if (!m.ok()) return;
    const YAML::Node name_node = m.require("name", "spine01-mirror");
    const YAML::Node host_node = m.require("host", "cap01");
    if (!name_node.IsDefined()) return;
    const auto name = detail::read_string(ctx_, name_node, "capture name");
    if (!name) return;
    if (!is_valid_name(*name)) {
      ctx_.error(name_node,
                 fmt::format("capture name '{}' is not a valid name; {}", shown(*name), name_rule));
      return;
    }
    const std::string owner = fmt::format("capture '{}'", *name);
    CapturePoint c;
    c.name = *name;
    c.where = detail::location_of(name_node);
    c.backend = "pcap";
    if (inv_.find_capture(c.name))
      ctx_.error(name_node, fmt::format("capture '{}' is defined twice (also at line {}); give "
                                        "each capture point its own name",
                                        *name, inv_.find_capture(c.name)->where.line));
    if (host_node.IsDefined())
      if (const auto v = detail::read_string(ctx_, host_node, owner + ": host")) {
        if (!inv_.find_host(*v))
          ctx_.error(host_node, fmt::format("{}: host '{}' is not in hosts; name one of the hosts, "
                                            "or add it to hosts",
                                            owner, shown(*v)));
        c.host = *v;
      }
    if (const auto n = m.get("backend"); n.IsDefined())
      if (const auto v = detail::read_choice(ctx_, n, owner + ": backend", {"pcap", "dpdk"}))
        c.backend = *v;
    if (const auto n = m.get("interface"); n.IsDefined())
      if (const auto v = detail::read_string(ctx_, n, owner + ": interface")) {
        if (is_valid_netdev(*v))
          c.interface = *v;
        else
          ctx_.error(n, fmt::format("{}: interface '{}' is not an interface name; name it as 'ip "
                                    "link' does (1-15 letters, digits, . _ - @)",
                                    owner, shown(*v)));
      }
    if (const auto n = m.get("dpdk_args"); n.IsDefined())
      if (const auto v = detail::read_string_list(ctx_, n, owner + ": dpdk_args")) {
        for (const auto& arg : *v)
          if (is_valid_dpdk_arg(arg))
            c.dpdk_args.push_back(arg);
          else
            ctx_.error(n, fmt::format("{}: dpdk_args item '{}' is not allowed; one EAL argument "
                                      "per item, without spaces, quotes or shell characters",
                                      owner, shown(arg)));
      }
    if (c.backend == "pcap" && !m.has("interface"))
      ctx_.error(entry, fmt::format("{} has no 'interface'; the pcap backend captures the "
                                    "interface wired to the mirror port",
                                    owner));
    if (c.backend == "dpdk" && !m.has("dpdk_args"))
      ctx_.error(entry, fmt::format("{} has no 'dpdk_args'; the dpdk backend needs the EAL "
                                    "arguments naming the port, e.g. ['-a', '0000:3b:00.1']",
                                    owner));
    if (const auto n = m.get("link_gbps"); n.IsDefined())
      if (const auto v = detail::read_number(ctx_, n, owner + ": link_gbps", 0, 1e6))
        c.link_gbps = *v;
    if (const auto n = m.get("mirrors"); n.IsDefined()) read_mirrors(n, owner, c.mirrors);
    inv_.captures.push_back(std::move(c));
  }

  void read_mirrors(const YAML::Node& n, const std::string& owner, Mirror& mirror) {
    const MapReader m(ctx_, n, owner + " mirrors", {"switch", "links", "ports", "direction"});
    if (!m.ok()) return;
    mirror.direction = "both";
    if (const auto s = m.get("switch"); s.IsDefined())
      if (const auto v = detail::read_string(ctx_, s, owner + ": mirrors switch")) {
        if (!inv_.find_switch(*v))
          ctx_.error(s, fmt::format("{}: switch '{}' is not in switches; add it there, or correct "
                                    "the name",
                                    owner, shown(*v)));
        mirror.switch_name = *v;
      }
    if (const auto l = m.get("links"); l.IsDefined())
      if (const auto v = detail::read_string_list(ctx_, l, owner + ": mirrors links")) {
        std::size_t i = 0;
        for (const auto& link : *v) {
          if (!link_names_.count(link))
            ctx_.error(l[i], fmt::format("{}: link '{}' is not in links; add it there, or correct "
                                         "the name",
                                         owner, shown(link)));
          ++i;
        }
        mirror.links = *v;
      }
    if (const auto p = m.get("ports"); p.IsDefined())
      if (const auto v = detail::read_string_list(ctx_, p, owner + ": mirrors ports"))
        mirror.ports = *v;
    if (const auto d = m.get("direction"); d.IsDefined())
      if (const auto v =
              detail::read_choice(ctx_, d, owner + ": mirrors direction",
                                  {"spine-to-leaf", "leaf-to-spine", "ingress", "egress", "both"}))
        mirror.direction = *v;
  }

  LoadContext& ctx_;
  Inventory inv_;
  std::map<std::string, Claim> node_names_;
  std::map<std::string, std::pair<std::string, int>> addresses_;
  std::map<std::string, std::pair<std::string, int>> nic_ips_;
  std::map<std::string, int> link_names_;
  std::map<std::string, int> rack_names_;
  std::map<std::string, std::string> host_rack_;
  struct NicLink {
    YAML::Node at;
    std::string what;
  };
  std::vector<NicLink> nic_links_;
  struct SwitchRack {
    YAML::Node at;
    std::string switch_name;
    std::string rack;
  };
  std::vector<SwitchRack> switch_racks_;
};

}  // namespace

std::string to_string(const Diagnostic& d) {
  return fmt::format("{}:{}:{}: {}", d.file, d.line, d.column, d.message);
}

LoadResult parse_inventory(std::string_view text, const std::string& file) {
  LoadContext ctx(file);
  LoadResult result;
  if (text.size() > max_text) {
    ctx.error(SourceLocation{1, 1}, "the file is larger than 64 MiB; split the inventory");
  } else if (nesting_too_deep(text)) {
    ctx.error(
        SourceLocation{1, 1},
        fmt::format("brackets nest deeper than {} levels; an inventory needs a few", max_nesting));
  } else {
    try {
      const YAML::Node root = YAML::Load(std::string(text));
      if (!root.IsDefined() || root.IsNull())
        ctx.error(SourceLocation{1, 1},
                  "the inventory is empty; start with 'schema_version: 1' "
                  "and a 'hosts:' list (docs/inventory.md has an example)");
      else
        result.inventory = Loader(ctx).load(root);
    } catch (const YAML::Exception& e) {
      const SourceLocation at = e.mark.is_null()
                                    ? SourceLocation{1, 1}
                                    : SourceLocation{e.mark.line + 1, e.mark.column + 1};
      ctx.error(at, fmt::format("YAML syntax error: {}; fix the indentation or quoting there",
                                shown(e.msg)));
      result.inventory.reset();
    }
  }
  result.diagnostics = ctx.take();
  if (!result.diagnostics.empty()) result.inventory.reset();
  if (result.inventory) result.inventory->file = file;
  return result;
}

Inventory load_inventory(const std::string& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in)
    throw input_error(
        fmt::format("cannot read inventory '{}': {}; check the path", file, std::strerror(errno)));
  std::ostringstream text;
  text << in.rdbuf();
  LoadResult result = parse_inventory(text.str(), file);
  if (result.inventory) return std::move(*result.inventory);
  std::string message;
  for (const auto& d : result.diagnostics) {
    if (!message.empty()) message += '\n';
    message += to_string(d);
  }
  message += fmt::format("\n{}: {} {}; nothing was run", file, result.diagnostics.size(),
                         result.diagnostics.size() == 1 ? "error" : "errors");
  throw input_error(message);
}

}  // namespace rocehil::inventory
