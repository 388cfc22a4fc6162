// The loader's shared helpers and its top level: defaults, ssh settings, names.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>

#include "loader.hpp"
#include "rocehil/inventory/names.hpp"
#include "rocehil/inventory/range.hpp"

namespace rocehil::inventory::detail {

Zipped zip(LoadContext& ctx, const YAML::Node& node, std::string_view what, std::size_t count,
           std::string_view count_source) {
  Zipped z;
  if (!node.IsDefined()) {
    z.values.assign(count, "");
    return z;
  }
  const auto text = read_string(ctx, node, what);
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

bool all_valid(LoadContext& ctx, const YAML::Node& node, const Zipped& z,
               bool (*valid)(std::string_view), std::string_view what, std::string_view rule) {
  for (const auto& v : z.values)
    if (!v.empty() && !valid(v)) {
      ctx.error(node, fmt::format("{} '{}' is not valid; {}", what, shown(v), rule));
      return false;
    }
  return true;
}

void read_ssh(LoadContext& ctx, const YAML::Node& node, const std::string& owner,
              SshSettings& ssh) {
  const MapReader m(
      ctx, node, owner + " ssh settings",
      {"user", "port", "identity", "known_hosts", "jump", "options", "connect_timeout_s"});
  if (!m.ok()) return;
  const auto field = [&](std::string_view key) { return owner + ": ssh " + std::string(key); };
  if (const auto n = m.get("user"); n.IsDefined())
    if (const auto v = read_string(ctx, n, field("user"))) {
      if (is_valid_user(*v))
        ssh.user = *v;
      else
        ctx.error(n, fmt::format("{} '{}' is not a login name; use letters, digits, '_', '.' and "
                                 "'-'",
                                 field("user"), shown(*v)));
    }
  if (const auto n = m.get("port"); n.IsDefined())
    if (const auto v = read_int(ctx, n, field("port"), 1, 65535, "22"))
      ssh.port = static_cast<int>(*v);
  for (const char* key : {"identity", "known_hosts"}) {
    const auto n = m.get(key);
    if (!n.IsDefined()) continue;
    const auto v = read_string(ctx, n, field(key));
    if (!v) continue;
    if (!is_valid_local_path(*v))
      ctx.error(n, fmt::format("{} '{}' is not a usable path; give an absolute path or one "
                               "starting with ~/ (letters, digits and . _ / + @ % , = : ~ -)",
                               field(key), shown(*v)));
    else
      (std::string_view(key) == "identity" ? ssh.identity : ssh.known_hosts) = *v;
  }
  if (const auto n = m.get("jump"); n.IsDefined())
    if (const auto v = read_string(ctx, n, field("jump"))) {
      if (is_valid_jump(*v))
        ssh.jump = *v;
      else
        ctx.error(n, fmt::format("{} '{}' is not [user@]host[:port]; name the jump host as ssh -J "
                                 "takes it",
                                 field("jump"), shown(*v)));
    }
  if (const auto n = m.get("options"); n.IsDefined())
    if (const auto v = read_string_list(ctx, n, field("options"))) {
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
    if (const auto v = read_int(ctx, n, field("connect_timeout_s"), 1, 300, "10"))
      ssh.connect_timeout_s = static_cast<int>(*v);
}

std::optional<std::string> read_entry_name(LoadContext& ctx, const YAML::Node& name_node,
                                           std::string_view kind) {
  if (!name_node.IsDefined()) return std::nullopt;
  auto name = read_string(ctx, name_node, fmt::format("{} name", kind));
  if (name && !is_valid_name(*name)) {
    ctx.error(name_node,
              fmt::format("{} name '{}' is not a valid name; {}", kind, shown(*name), name_rule));
    return std::nullopt;
  }
  return name;
}

std::optional<Provider> read_provider(LoadContext& ctx, const YAML::Node& n,
                                      std::string_view what) {
  const auto v = read_choice(ctx, n, what, {"soft", "verbs"});
  if (!v) return std::nullopt;
  return *v == "soft" ? Provider::soft : Provider::verbs;
}

std::optional<std::string> read_agent(LoadContext& ctx, const YAML::Node& n,
                                      std::string_view what) {
  const auto v = read_string(ctx, n, what);
  if (!v) return std::nullopt;
  if (is_valid_agent_path(*v)) return v;
  ctx.error(n, fmt::format("{} '{}' is not usable; give an absolute path (/usr/local/bin/rocehil) "
                           "or a command name on the host's PATH",
                           what, shown(*v)));
  return std::nullopt;
}

std::optional<Inventory> Loader::load(const YAML::Node& root) {
  const MapReader top(ctx_, root, "the inventory",
                      {"schema_version", "name", "defaults", "hosts", "racks", "switches", "links",
                       "captures", "controller"});
  if (!top.ok()) return std::nullopt;
  const auto version = top.require("schema_version", "1");
  if (version.IsDefined())
    if (const auto v = read_int(ctx_, version, "schema_version", 1, 1000000, "1"); v && *v != 1)
      ctx_.error(version, fmt::format("schema_version {} is not supported; this rocehil reads "
                                      "schema_version 1",
                                      *v));
  if (const auto n = top.get("name"); n.IsDefined())
    if (const auto v = read_string(ctx_, n, "name")) inv_.name = shown(*v);
  if (const auto n = top.get("defaults"); n.IsDefined()) read_defaults(n);
  if (const auto n = top.get("controller"); n.IsDefined()) read_controller(n);
  const auto hosts = top.require("hosts", "[{name: h1, address: 10.0.0.1}]");
  if (hosts.IsDefined()) read_list(hosts, "hosts", [&](const YAML::Node& h) { read_host(h); });
  if (hosts.IsNull() || (hosts.IsSequence() && hosts.size() == 0))
    ctx_.error(hosts, "hosts lists no host; add at least one ('- name: gpu001')");
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

void Loader::read_controller(const YAML::Node& n) {
  const MapReader m(
      ctx_, n, "controller",
      {"address", "port", "listen", "join_timeout_s", "agents", "fleet", "secret_file"});
  if (!m.ok()) return;
  Controller c;
  c.where = {n.Mark().line + 1, n.Mark().column + 1};
  const auto ipv4 = [&](const YAML::Node& v, std::string_view what) -> std::optional<std::string> {
    const auto text = read_string(ctx_, v, what);
    if (!text) return std::nullopt;
    if (is_ipv4_address(*text)) return text;
    ctx_.error(v, fmt::format("{} '{}' is not an IPv4 address; give the controller machine's "
                              "address as the hosts reach it (198.18.0.1)",
                              what, shown(*text)));
    return std::nullopt;
  };
  if (const auto a = m.require("address", "198.18.0.1"); a.IsDefined())
    if (const auto v = ipv4(a, "controller: address")) c.address = *v;
  if (const auto l = m.get("listen"); l.IsDefined())
    if (const auto v = ipv4(l, "controller: listen")) c.listen = *v;
  if (const auto p = m.get("port"); p.IsDefined())
    if (const auto v = read_int(ctx_, p, "controller: port", 0, 65535, "0 (any free port)"))
      c.port = static_cast<int>(*v);
  if (const auto t = m.get("join_timeout_s"); t.IsDefined())
    if (const auto v = read_number(ctx_, t, "controller: join_timeout_s", 1, 3600))
      c.join_timeout_s = *v;
  if (const auto a = m.get("agents"); a.IsDefined())
    if (const auto v = read_choice(ctx_, a, "controller: agents", {"rocehil", "external"}))
      c.agents_external = *v == "external";
  if (const auto f = m.get("fleet"); f.IsDefined())
    if (const auto v = read_string(ctx_, f, "controller: fleet")) {
      if (is_valid_name(*v))
        c.fleet = *v;
      else
        ctx_.error(f, fmt::format("controller: fleet '{}' is not a name; use letters, digits, "
                                  "'.', '_' and '-' (nightly)",
                                  shown(*v)));
    }
  if (const auto s = m.get("secret_file"); s.IsDefined())
    if (const auto v = read_string(ctx_, s, "controller: secret_file")) c.secret_file = *v;
  if (c.agents_external) {
    if (c.port == 0)
      ctx_.error(n,
                 "controller: agents: external needs a fixed port (port: 7400): the agents "
                 "others start must know where to dial");
    if (!m.has("fleet"))
      ctx_.error(n,
                 "controller: agents: external needs 'fleet': the name its agents join "
                 "under (their --run-id)");
    if (c.secret_file.empty())
      ctx_.error(n,
                 "controller: agents: external needs 'secret_file': the file holding the key "
                 "its agents hold (openssl rand -hex 32 > FILE; chmod 600 FILE)");
  } else if (m.has("fleet") || m.has("secret_file")) {
    ctx_.error(n,
               "controller: 'fleet' and 'secret_file' go with 'agents: external'; rocehil "
               "draws a key for each run of the agents it starts");
  }
  inv_.controller = c;
}

void Loader::read_defaults(const YAML::Node& n) {
  const MapReader m(ctx_, n, "defaults",
                    {"ssh", "agent", "provider", "launcher", "link_gbps", "gid_index", "port",
                     "snmp", "settings"});
  if (!m.ok()) return;
  Defaults& d = inv_.defaults;
  if (const auto s = m.get("ssh"); s.IsDefined()) read_ssh(ctx_, s, "defaults", d.ssh);
  if (const auto s = m.get("snmp"); s.IsDefined()) d.snmp = read_snmp(ctx_, s, "defaults");
  if (const auto s = m.get("settings"); s.IsDefined())
    d.settings = read_settings_map(ctx_, s, "defaults: settings");
  if (const auto a = m.get("agent"); a.IsDefined())
    if (const auto v = read_agent(ctx_, a, "defaults: agent")) d.agent = *v;
  if (const auto p = m.get("provider"); p.IsDefined())
    if (const auto v = read_provider(ctx_, p, "defaults: provider")) d.provider = *v;
  if (const auto l = m.get("launcher"); l.IsDefined())
    if (const auto v = read_choice(ctx_, l, "defaults: launcher", {"ssh", "local", "slurm"}))
      d.launcher = *launcher_named(*v);
  if (const auto g = m.get("link_gbps"); g.IsDefined())
    if (const auto v = read_number(ctx_, g, "defaults: link_gbps", 0, 1e6)) d.link_gbps = *v;
  if (const auto g = m.get("gid_index"); g.IsDefined())
    if (const auto v = gid_index(g, "defaults")) d.gid_index = *v;
  if (const auto p = m.get("port"); p.IsDefined())
    if (const auto v = read_int(ctx_, p, "defaults: port", 1, 255, "1"))
      d.port = static_cast<int>(*v);
}

// `host` names the host in the hint; a default has none yet.
std::optional<int> Loader::gid_index(const YAML::Node& n, const std::string& owner,
                                     std::string_view host) {
  if (!n.IsScalar()) {
    read_int(ctx_, n, owner + ": gid_index", 0, 255, "3");
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
  const auto checked = read_int(ctx_, n, owner + ": gid_index", 0, 255, "3");
  if (!checked) return std::nullopt;
  return static_cast<int>(*checked);
}

// A name of a host or a switch, which share one namespace because link ends name either.
void Loader::claim_node_name(const std::string& name, const YAML::Node& at, std::string_view kind) {
  const auto [it, fresh] = node_names_.try_emplace(name, location_of_str(at, kind));
  if (!fresh)
    ctx_.error(at, fmt::format("{} '{}' is defined twice (the other is the {} at line {}); give "
                               "each its own name",
                               kind, shown(name), it->second.kind, it->second.line));
}

}  // namespace rocehil::inventory::detail
