// Capture points and what their mirror ports copy.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>

#include "loader.hpp"
#include "rocehil/inventory/names.hpp"
#include "rocehil/inventory/range.hpp"

namespace rocehil::inventory::detail {

void Loader::read_capture(const YAML::Node& entry) {
  const MapReader m(
      ctx_, entry, "capture entry",
      {"name", "host", "backend", "interface", "dpdk_args", "link_gbps", "mirrors", "remote"});
  if (!m.ok()) return;
  const YAML::Node name_node = m.require("name", "spine01-mirror");
  const YAML::Node host_node = m.require("host", "cap01");
  const auto name = read_entry_name(ctx_, name_node, "capture");
  if (!name) return;
  const std::string owner = fmt::format("capture '{}'", *name);
  CapturePoint c;
  c.name = *name;
  c.where = location_of(name_node);
  c.backend = "pcap";
  if (inv_.find_capture(c.name))
    ctx_.error(name_node, fmt::format("capture '{}' is defined twice (also at line {}); give "
                                      "each capture point its own name",
                                      *name, inv_.find_capture(c.name)->where.line));
  if (host_node.IsDefined())
    if (const auto v = read_string(ctx_, host_node, owner + ": host")) {
      if (!inv_.find_host(*v))
        ctx_.error(host_node, fmt::format("{}: host '{}' is not in hosts; name one of the hosts, "
                                          "or add it to hosts",
                                          owner, shown(*v)));
      c.host = *v;
    }
  if (const auto n = m.get("backend"); n.IsDefined())
    if (const auto v = read_choice(ctx_, n, owner + ": backend", {"pcap", "dpdk"})) c.backend = *v;
  if (const auto n = m.get("interface"); n.IsDefined())
    if (const auto v = read_string(ctx_, n, owner + ": interface")) {
      if (is_valid_netdev(*v))
        c.interface = *v;
      else
        ctx_.error(n, fmt::format("{}: interface '{}' is not an interface name; name it as 'ip "
                                  "link' does (1-15 letters, digits, . _ - @)",
                                  owner, shown(*v)));
    }
  if (const auto n = m.get("dpdk_args"); n.IsDefined())
    if (const auto v = read_string_list(ctx_, n, owner + ": dpdk_args")) {
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
    if (const auto v = read_number(ctx_, n, owner + ": link_gbps", 0, 1e6)) c.link_gbps = *v;
  if (const auto n = m.get("mirrors"); n.IsDefined()) read_mirrors(n, owner, c.mirrors);
  if (const auto n = m.get("remote"); n.IsDefined()) read_remote(n, owner, c);
  inv_.captures.push_back(std::move(c));
}

// A remote mirror session: several capture points may share a collector's interface, each taking
// its own session, so two taking the same one would each report the other's frames.
void Loader::read_remote(const YAML::Node& n, const std::string& owner, CapturePoint& c) {
  const MapReader m(ctx_, n, owner + " remote", {"session", "source"});
  if (!m.ok()) return;
  RemoteMirror remote;
  const YAML::Node session = m.require("session", "1");
  if (session.IsDefined()) {
    const auto v = read_int(ctx_, session, owner + ": remote session", 0, 4294967295L, "1");
    if (!v) return;
    remote.session = static_cast<std::uint32_t>(*v);
  }
  if (const auto s = m.get("source"); s.IsDefined())
    if (const auto v = read_string(ctx_, s, owner + ": remote source")) {
      if (!is_ip_address(*v)) {
        ctx_.error(s, fmt::format("{}: remote source '{}' is not an IP address; write the "
                                  "switch's tunnel source address, e.g. 10.0.0.11",
                                  owner, shown(*v)));
        return;
      }
      remote.source = *v;
    }
  for (const CapturePoint& other : inv_.captures) {
    if (!other.remote || other.host != c.host || other.interface != c.interface ||
        other.remote->session != remote.session || other.remote->source != remote.source)
      continue;
    ctx_.error(session, fmt::format("{}: session {} on {}:{} is taken by capture '{}' (line {}) "
                                    "already; give each capture point its own session",
                                    owner, remote.session, shown(c.host), shown(c.interface),
                                    other.name, other.where.line));
    return;
  }
  c.remote = remote;
}

void Loader::read_mirrors(const YAML::Node& n, const std::string& owner, Mirror& mirror) {
  const MapReader m(ctx_, n, owner + " mirrors", {"switch", "links", "ports", "direction"});
  if (!m.ok()) return;
  mirror.direction = "both";
  if (const auto s = m.get("switch"); s.IsDefined())
    if (const auto v = read_string(ctx_, s, owner + ": mirrors switch")) {
      if (!inv_.find_switch(*v))
        ctx_.error(s, fmt::format("{}: switch '{}' is not in switches; add it there, or correct "
                                  "the name",
                                  owner, shown(*v)));
      mirror.switch_name = *v;
    }
  if (const auto l = m.get("links"); l.IsDefined())
    if (const auto v = read_string_list(ctx_, l, owner + ": mirrors links")) {
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
    if (const auto v = read_string_list(ctx_, p, owner + ": mirrors ports")) mirror.ports = *v;
  if (const auto d = m.get("direction"); d.IsDefined())
    if (const auto v = read_choice(ctx_, d, owner + ": mirrors direction",
                                   {"spine-to-leaf", "leaf-to-spine", "ingress", "egress", "both"}))
      mirror.direction = *v;
}

}  // namespace rocehil::inventory::detail
