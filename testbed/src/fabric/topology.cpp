#include "rocehil/testbed/topology.hpp"

#include <arpa/inet.h>
#include <fmt/format.h>

#include <charconv>
#include <cstdint>

namespace rocehil::testbed {

std::string_view to_string(Role role) {
  switch (role) {
    case Role::host: return "host";
    case Role::leaf: return "leaf";
    case Role::spine: return "spine";
    case Role::capture: return "capture";
  }
  return "?";
}

std::string_view to_string(LinkKind kind) {
  switch (kind) {
    case LinkKind::host: return "host";
    case LinkKind::uplink: return "uplink";
    case LinkKind::mgmt: return "mgmt";
    case LinkKind::mirror: return "mirror";
  }
  return "?";
}

const Namespace* Topology::find(std::string_view name) const {
  for (const auto& ns : namespaces)
    if (ns.name == name) return &ns;
  return nullptr;
}

bool is_switch(const Namespace& ns) {
  return ns.role == Role::leaf || ns.role == Role::spine;
}

bool runs_sshd(const Namespace& ns) {
  return ns.role == Role::host || ns.role == Role::capture;
}

bool runs_lldpd(const Namespace& ns) {
  return ns.role == Role::host || is_switch(ns);
}

bool is_fabric(const Interface& i) {
  return i.kind == LinkKind::host || i.kind == LinkKind::uplink;
}

std::vector<const Interface*> fabric_interfaces(const Namespace& ns) {
  std::vector<const Interface*> out;
  for (const auto& i : ns.interfaces)
    if (is_fabric(i)) out.push_back(&i);
  return out;
}

namespace {

struct Range {
  std::uint32_t first = 0, last = 0;
};

std::optional<Range> parse_prefix(std::string_view text) {
  const auto slash = text.find('/');
  const std::string address(text.substr(0, slash));
  int length = 32;
  if (slash != std::string_view::npos) {
    const auto digits = text.substr(slash + 1);
    const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), length);
    if (ec != std::errc() || end != digits.data() + digits.size() || length < 0 || length > 32)
      return std::nullopt;
  }
  in_addr a{};
  if (::inet_pton(AF_INET, address.c_str(), &a) != 1) return std::nullopt;
  const std::uint32_t host_order = ntohl(a.s_addr);
  const std::uint32_t mask = length == 0 ? 0 : ~0u << (32 - length);
  return Range{host_order & mask, (host_order & mask) | ~mask};
}

}  // namespace

std::optional<int> choose_mgmt_octet(std::string_view id,
                                     const std::vector<std::string>& used_prefixes, int length) {
  const std::uint32_t span = length == 23 ? 2 : 1;  // /24s the network covers
  std::vector<Range> used;
  for (const auto& p : used_prefixes)
    if (auto r = parse_prefix(p); r && !(r->first == 0 && r->last == ~0u)) used.push_back(*r);
  std::uint32_t hash = 0;
  for (unsigned char c : id) hash = hash * 31 + c;
  for (int step = 0; step < 256; ++step) {
    const int octet = static_cast<int>((hash + static_cast<std::uint32_t>(step)) % 256);
    if (static_cast<std::uint32_t>(octet) % span != 0) continue;
    const std::uint32_t first =
        (198u << 24) | (19u << 16) | (static_cast<std::uint32_t>(octet) << 8);
    const std::uint32_t last = first + span * 256 - 1;
    bool free = true;
    for (const auto& r : used)
      if (r.first <= last && first <= r.last) free = false;
    if (free) return octet;
  }
  return std::nullopt;
}

std::string netns_prefix(std::string_view id) {
  return fmt::format("rocehil-{}-", id);
}

namespace {

// Hosts spread evenly: rack of host i (0-based) is i*R/N, so no rack is left empty.
int rack_of(int host_index, int hosts, int racks) {
  return host_index * racks / hosts + 1;
}

std::string host_gateway(int rack) {
  return fmt::format("198.18.{}.1", rack);
}
std::string leaf_uplink_address(int rack, int spine) {
  return fmt::format("198.18.{}.{}", 100 + spine, 2 * rack);
}
std::string spine_downlink_address(int rack, int spine) {
  return fmt::format("198.18.{}.{}", 100 + spine, 2 * rack + 1);
}

class TopologyBuilder {
 public:
  TopologyBuilder(const TestbedOptions& o, int mgmt_octet)
      : o_(o), mgmt_octet_(mgmt_octet), mgmt_length_(mgmt_prefix_length) {
    t_.id = o.id;
    t_.bridge = ifname("br");
    t_.mgmt_gateway = mgmt_address(1);
    t_.mgmt_prefix = fmt::format("198.19.{}.0/{}", mgmt_octet, mgmt_length_);
    t_.fabric_prefix = "198.18.0.0/16";
  }

  Topology build() {
    for (int r = 1; r <= o_.racks; ++r) add_namespace(fmt::format("l{}", r), Role::leaf, r);
    for (int s = 1; s <= o_.spines; ++s) add_namespace(fmt::format("s{}", s), Role::spine, 0);
    add_hosts();
    add_uplinks();
    add_capture();
    add_switch_mgmt();
    return std::move(t_);
  }

 private:
  std::string ifname(std::string_view local) const { return fmt::format("{}-{}", o_.id, local); }
  // The n-th address of the management network (n from 1; past 255 in the /23's second /24).
  std::string mgmt_address(int n) const {
    return fmt::format("198.19.{}.{}", mgmt_octet_ + n / 256, n % 256);
  }

  Namespace& add_namespace(std::string name, Role role, int rack) {
    Namespace ns;
    ns.netns = netns_prefix(o_.id) + name;
    ns.name = std::move(name);
    ns.role = role;
    ns.rack = rack;
    t_.namespaces.push_back(std::move(ns));
    return t_.namespaces.back();
  }
  Namespace& ns(std::string_view name) {
    for (auto& n : t_.namespaces)
      if (n.name == name) return n;
    throw std::logic_error("topology: no namespace " + std::string(name));
  }

  // The management port: a veth from the root namespace's bridge, where sshd or snmpd listens.
  void add_mgmt(Namespace& n, int host_octet) {
    n.mgmt_address = mgmt_address(host_octet);
    Interface i{
        ifname("mgmt"), n.mgmt_address, mgmt_length_, {}, "mgmt-" + n.name, LinkKind::mgmt, 0};
    n.interfaces.push_back(i);
    t_.links.push_back({i.link, LinkKind::mgmt, {"", ifname(n.name)}, {n.name, i.name}, 0});
  }

  void add_hosts() {
    std::vector<int> hosts_in_rack(static_cast<std::size_t>(o_.racks) + 1, 0);
    for (int h = 0; h < o_.hosts; ++h) {
      const int rack = rack_of(h, o_.hosts, o_.racks);
      const int k = ++hosts_in_rack[static_cast<std::size_t>(rack)];
      const std::string name = fmt::format("h{}", h + 1);
      const std::string leaf = fmt::format("l{}", rack);
      const std::string link = name + "-" + leaf;
      const std::string address = fmt::format("198.18.{}.{}", rack, 10 + k);
      // add_namespace may reallocate the vector: take references only after it.
      add_namespace(name, Role::host, rack);
      Namespace& host = ns(name);
      host.fabric_address = address;
      host.interfaces.push_back(
          {ifname("nic0"), address, 32, host_gateway(rack), link, LinkKind::host, o_.host_mbps});
      host.routes.push_back({t_.fabric_prefix, {host_gateway(rack)}, {ifname("nic0")}});
      add_mgmt(host, 10 + h + 1);
      ns(leaf).interfaces.push_back(
          {ifname(name), host_gateway(rack), 32, address, link, LinkKind::host, o_.host_mbps});
      t_.links.push_back(
          {link, LinkKind::host, {name, ifname("nic0")}, {leaf, ifname(name)}, o_.host_mbps});
    }
  }

  void add_uplinks() {
    for (int r = 1; r <= o_.racks; ++r) {
      for (int s = 1; s <= o_.spines; ++s) {
        const std::string leaf = fmt::format("l{}", r), spine = fmt::format("s{}", s);
        const std::string link = leaf + "-" + spine;
        ns(leaf).interfaces.push_back({ifname(spine), leaf_uplink_address(r, s), 32,
                                       spine_downlink_address(r, s), link, LinkKind::uplink,
                                       o_.uplink_mbps});
        ns(spine).interfaces.push_back({ifname(leaf), spine_downlink_address(r, s), 32,
                                        leaf_uplink_address(r, s), link, LinkKind::uplink,
                                        o_.uplink_mbps});
        t_.links.push_back(
            {link, LinkKind::uplink, {leaf, ifname(spine)}, {spine, ifname(leaf)}, o_.uplink_mbps});
        // Spines know each rack through its leaf.
        ns(spine).routes.push_back(
            {fmt::format("198.18.{}.0/24", r), {leaf_uplink_address(r, s)}, {ifname(leaf)}});
      }
    }
    // Leaves reach the other racks over every spine: the multipath route ECMP hashes over.
    for (int r = 1; r <= o_.racks; ++r) {
      Namespace& leaf = ns(fmt::format("l{}", r));
      for (int other = 1; other <= o_.racks; ++other) {
        if (other == r) continue;
        Route route{fmt::format("198.18.{}.0/24", other), {}, {}};
        for (int s = 1; s <= o_.spines; ++s) {
          route.next_hops.push_back(spine_downlink_address(r, s));
          route.devices.push_back(ifname(fmt::format("s{}", s)));
        }
        leaf.routes.push_back(std::move(route));
      }
    }
  }

  void add_capture() {
    add_namespace("cap", Role::capture, 0);
    add_mgmt(ns("cap"), 2);
    for (int s = 1; s <= o_.spines; ++s) {
      const std::string spine = fmt::format("s{}", s);
      MirrorSession session{spine, {}, {}, o_.mirror, {}, std::nullopt};
      for (int r = 1; r <= o_.racks; ++r) session.links.push_back(fmt::format("l{}-{}", r, spine));
      if (o_.mirror_mode == MirrorMode::local)
        add_local_mirror(session);
      else
        add_remote_mirror(session, s);
      t_.mirrors.push_back(std::move(session));
    }
  }

  void add_local_mirror(MirrorSession& session) {
    const std::string& spine = session.spine;
    const std::string link = spine + "-cap";
    session.target = ifname("cap");
    session.interface = ifname("m" + spine.substr(1));
    ns(spine).interfaces.push_back({session.target, {}, 0, {}, link, LinkKind::mirror, 0});
    ns("cap").interfaces.push_back({session.interface, {}, 0, {}, link, LinkKind::mirror, 0});
    t_.links.push_back(
        {link, LinkKind::mirror, {spine, session.target}, {"cap", session.interface}, 0});
  }

  // Both ends in the spine: the copies leave the switch only as encapsulated packets on its
  // management port, as a real switch's ERSPAN session sends them.
  void add_remote_mirror(MirrorSession& session, int s) {
    const std::string& spine = session.spine;
    const std::string link = spine + "-span";
    RemoteMirror remote{o_.mirror_mode,
                        s,
                        mgmt_address(spine_mgmt_number(s)),
                        ns("cap").mgmt_address,
                        ifname("relay"),
                        {},
                        o_.mirror_truncate};
    for (int r = 1; r <= o_.racks; ++r) remote.ports.push_back(ifname(fmt::format("l{}", r)));
    session.target = ifname("span");
    session.interface = ifname("mgmt");  // the capture namespace's
    ns(spine).interfaces.push_back({session.target, {}, 0, {}, link, LinkKind::mirror, 0});
    ns(spine).interfaces.push_back({remote.relay_interface, {}, 0, {}, link, LinkKind::mirror, 0});
    t_.links.push_back(
        {link, LinkKind::mirror, {spine, session.target}, {spine, remote.relay_interface}, 0});
    session.remote = std::move(remote);
  }

  // Leaf r's and spine s's management addresses: in the /23's upper half, above any host.
  static int leaf_mgmt_number(int r) { return 256 + 100 + r; }
  static int spine_mgmt_number(int s) { return 256 + 200 + s; }

  // Switches are managed as real ones are, over SNMP on their management port: in the /23's
  // upper half, above any host address.
  void add_switch_mgmt() {
    for (int r = 1; r <= o_.racks; ++r) add_mgmt(ns(fmt::format("l{}", r)), leaf_mgmt_number(r));
    for (int s = 1; s <= o_.spines; ++s) add_mgmt(ns(fmt::format("s{}", s)), spine_mgmt_number(s));
  }

  const TestbedOptions& o_;
  int mgmt_octet_;
  int mgmt_length_;
  Topology t_;
};

}  // namespace

Topology build_topology(const TestbedOptions& options, int mgmt_octet) {
  return TopologyBuilder(options, mgmt_octet).build();
}

}  // namespace rocehil::testbed
