#include "rocehil/testbed/scripts.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace rocehil::testbed {

std::string netns_add_batch(const Topology& t) {
  std::string out;
  for (const auto& ns : t.namespaces) out += fmt::format("netns add {}\n", ns.netns);
  return out;
}

namespace {

std::string end_spec(const Topology& t, const LinkEnd& end) {
  if (end.ns.empty()) return fmt::format("name {}", end.interface);
  return fmt::format("name {} netns {}", end.interface, t.find(end.ns)->netns);
}

}  // namespace

std::string links_batch(const Topology& t) {
  std::string out = fmt::format("link add name {} type bridge\n", t.bridge);
  // The bridge's address with the network's length: the prefix ends in "/24" or "/23".
  out += fmt::format("addr add {}{} dev {}\n", t.mgmt_gateway,
                     t.mgmt_prefix.substr(t.mgmt_prefix.find('/')), t.bridge);
  out += fmt::format("link set dev {} up\n", t.bridge);
  for (const auto& link : t.links) {
    out += fmt::format("link add {} type veth peer {}\n", end_spec(t, link.a), end_spec(t, link.b));
    if (link.a.ns.empty())
      out += fmt::format("link set dev {} master {} up\n", link.a.interface, t.bridge);
  }
  return out;
}

std::vector<std::string> sysctls(const Namespace& ns, const TestbedOptions& options) {
  std::vector<std::string> out = {"net.ipv6.conf.all.disable_ipv6=1",
                                  "net.ipv6.conf.default.disable_ipv6=1"};
  if (ns.role == Role::leaf || ns.role == Role::spine) {
    // A lossless switch forwards in its own process (switchd.hpp); the kernel keeps only the
    // control plane, and must not forward the packets a second time.
    out.insert(out.end(),
               {options.lossless ? "net.ipv4.ip_forward=0" : "net.ipv4.ip_forward=1",
                "net.ipv4.conf.all.rp_filter=0", "net.ipv4.conf.default.rp_filter=0",
                "net.ipv4.conf.all.send_redirects=0", "net.ipv4.conf.default.send_redirects=0",
                // Hash on addresses, protocol and ports: the UDP source port of a
                // RoCEv2 flow picks the spine, as on a real Clos fabric.
                "net.ipv4.fib_multipath_hash_policy=1",
                fmt::format("net.ipv4.fib_multipath_hash_seed={}", options.ecmp_seed)});
  }
  return out;
}

std::string namespace_ip_batch(const Namespace& ns, const TestbedOptions& options) {
  std::string out = "link set dev lo up\n";
  // A guest's namespace only bridges its veths to the guest's taps (guest_tap_batch): the
  // addresses and routes are the guest's.
  const bool guest = options.vm.enabled && ns.role == Role::host;
  for (const auto& i : ns.interfaces) {
    if (i.kind != LinkKind::mgmt)
      out += fmt::format("link set dev {} mtu {}\n", i.name, options.mtu);
    if (!i.address.empty() && !guest) {
      if (!i.peer_address.empty())
        out += fmt::format("addr add {} peer {} dev {}\n", i.address, i.peer_address, i.name);
      else
        out += fmt::format("addr add {}/{} dev {}\n", i.address, i.prefix_length, i.name);
    }
    out += fmt::format("link set dev {} up\n", i.name);
  }
  // Under BGP the switches' routes are what their zebra programs (frr_files.hpp); hosts keep
  // their route to their leaf.
  const bool routed_by_bgp = options.routing == Routing::bgp && is_switch(ns);
  for (const auto& r : ns.routes) {
    if (guest || routed_by_bgp) break;
    if (r.next_hops.size() == 1) {
      out += fmt::format("route add {} via {} dev {}\n", r.prefix, r.next_hops[0], r.devices[0]);
      continue;
    }
    out += fmt::format("route add {}", r.prefix);
    for (std::size_t h = 0; h < r.next_hops.size(); ++h)
      out += fmt::format(" nexthop via {} dev {} weight 1", r.next_hops[h], r.devices[h]);
    out += '\n';
  }
  return out;
}

std::vector<std::vector<std::string>> offload_commands(const Namespace& ns,
                                                       const TestbedOptions& options) {
  std::vector<std::vector<std::string>> out;
  if (!options.lossless || ns.role != Role::host) return out;
  for (const auto& i : ns.interfaces) {
    if (!is_fabric(i)) continue;
    // A veth hands its peer what the sender's stack left undone: UDP and TCP checksums to fill
    // in, TCP segments of 64 KB to cut. A kernel that receives them copes; a switch forwarding
    // from a packet socket would send them on as they are. Off, the sender's kernel finishes
    // every frame, as a NIC does before the wire.
    out.push_back({"ip", "netns", "exec", ns.netns, "ethtool", "-K", i.name, "tx", "off", "sg",
                   "off", "tso", "off", "gso", "off", "gro", "off"});
  }
  return out;
}

long long burst_bytes(int mbps, int mtu) {
  const long long per_ms = static_cast<long long>(mbps) * 1'000'000 / 8 / 1000;
  return std::max(per_ms, 2LL * (mtu + 18));
}

std::string tbf_qdisc(int mbps, int mtu, int latency_ms) {
  // 5 ms of queue at the rate before tail drop: a deep-buffer switch port, scaled down.
  return fmt::format("tbf rate {}mbit burst {} latency {}ms", mbps, burst_bytes(mbps, mtu),
                     latency_ms);
}

std::string port_qdisc(const Namespace& ns, const Interface& i, const TestbedOptions& o) {
  // A guest's NIC: its frames wait here for the host rate, and a tbf that tail-drops them is a
  // NIC that loses what its host handed it. rxe recovered from those drops badly (a 1 MiB
  // allreduce with 2 QPs over 4 guests ended in retry_exceeded or remote_invalid_request; with
  // this queue, 0 drops and it passes). A NIC pulls from its host's memory as the wire allows:
  // the queue is as deep as rxe's in-flight packets.
  // On a lossless fabric the guest's NIC process paces and holds them back instead
  // (guest_nic.hpp), and the tbf is a soft host's.
  if (o.vm.enabled && !o.lossless && ns.role == Role::host && i.kind == LinkKind::host)
    return fmt::format("tbf rate {}mbit burst {} limit {}", i.mbps, burst_bytes(i.mbps, o.mtu),
                       guest_nic_queue_bytes);
  return tbf_qdisc(i.mbps, o.mtu, o.lossless ? 1 : 5);
}

std::string ecn_table_name(std::string_view id) {
  return fmt::format("rocehil_{}", id);
}

long long ecn_mark_packets_per_second(int mbps) {
  const long long bits = static_cast<long long>(mbps) * 1'000'000;
  return std::max(1LL, (bits / 8 + ecn_mark_packet_bytes / 2) / ecn_mark_packet_bytes);
}

long long ecn_mark_burst_packets(int mbps) {
  return std::max(2LL, ecn_mark_packets_per_second(mbps) / 1000);
}

std::string namespace_tc_batch(const Namespace& ns, const Topology& t, const TestbedOptions& o) {
  std::string out;
  // A lossless switch's ports are paced by its forwarding process. A host's NIC keeps its tbf,
  // with 1 ms of queue: what a host has sent before a PFC pause reaches it still drains into
  // the switch, and the switch's headroom must hold it.
  if (o.lossless && is_switch(ns)) return out;
  for (const auto& i : ns.interfaces)
    if (i.mbps > 0) out += fmt::format("qdisc add dev {} root {}\n", i.name, port_qdisc(ns, i, o));
  if (ns.role != Role::spine) return out;
  std::string mirror_port;
  for (const auto& m : t.mirrors)
    if (m.spine == ns.name) mirror_port = m.target;
  if (mirror_port.empty()) return out;
  // What a spine sends is copied by nftables (mirror_nft_ruleset); what it receives only by tc,
  // whose ingress hook makes the kernel count every frame no protocol takes (LLDP, whose lldpd
  // reads through a packet socket) as a receive discard: a spine port in that mode reports
  // ifInDiscards a real switch would not.
  if (o.mirror == MirrorDirection::spine_to_leaf) return out;
  for (const auto& i : ns.interfaces) {
    // Leaf-facing ports only: never the mirror port itself, nor the management port (SNMP
    // polls are not fabric traffic).
    if (i.kind != LinkKind::uplink) continue;
    // matchall is not in every kernel, a zero-mask u32 match is.
    out += fmt::format("qdisc add dev {} clsact\n", i.name);
    out += fmt::format(
        "filter add dev {} ingress protocol all u32 match u32 0 0 action mirred egress mirror dev "
        "{}\n",
        i.name, mirror_port);
  }
  return out;
}

std::string namespace_nft_ruleset(const Namespace& ns, const Topology& t,
                                  const TestbedOptions& options) {
  // A lossless switch marks by queue depth in its forwarding process (WRED, switch.ecn_enable).
  if (!options.ecn || options.lossless || (ns.role != Role::leaf && ns.role != Role::spine))
    return {};
  std::string out = fmt::format("table ip {} {{\n", ecn_table_name(t.id));
  out += "  chain ecn_marking {\n    type filter hook postrouting priority 0; policy accept;\n";
  for (const auto& i : ns.interfaces) {
    if (!is_fabric(i)) continue;  // the mirror port carries copies, management no RoCE
    // Only ECN-capable transport is marked (RFC 3168); not-ECT traffic passes unmarked.
    out += fmt::format(
        "    oifname \"{}\" udp dport 4791 ip ecn {{ ect0, ect1 }} limit rate over {}/second "
        "burst {} packets ip ecn set ce counter\n",
        i.name, ecn_mark_packets_per_second(options.ecn_mark_mbps),
        ecn_mark_burst_packets(options.ecn_mark_mbps));
  }
  out += "  }\n}\n";
  return out;
}

std::string mirror_nft_ruleset(const Namespace& ns, const Topology& t, const TestbedOptions& o) {
  const bool remote = !t.mirrors.empty() && t.mirrors.front().remote;
  const std::string table = fmt::format("rocehil_{}_mirror", t.id);
  if (ns.role == Role::capture && remote)
    // No GRE module answers protocol 47 here, so the kernel would send ICMP protocol-unreachable
    // for every copy; captures still see them, libpcap taps before netfilter.
    return fmt::format(
        "table ip {} {{\n  chain input {{\n    type filter hook input priority 0; policy "
        "accept;\n    ip protocol gre counter drop\n  }}\n}}\n",
        table);
  if (ns.role != Role::spine) return {};
  for (const auto& m : t.mirrors) {
    if (m.spine != ns.name) continue;
    std::string chains;
    // What the spine sends toward its leaves, copied at the netdev egress hook: after its
    // nftables ECN marks, before its shaper, as a switch's egress mirror takes it. Unlike tc's
    // clsact, it leaves the port's receive path as it was (no discards counted for LLDP).
    if (o.mirror != MirrorDirection::leaf_to_spine)
      for (const auto& i : ns.interfaces) {
        if (i.kind != LinkKind::uplink) continue;
        std::string chain = i.name;
        std::replace(chain.begin(), chain.end(), '-', '_');
        chains += fmt::format(
            "  chain copy_{} {{\n    type filter hook egress device \"{}\" priority 0; policy "
            "accept;\n    dup to \"{}\"\n  }}\n",
            chain, i.name, m.target);
      }
    // The copies are for the relay's packet socket, which reads before this hook; the spine's
    // own stack must not take them (it would answer a mirrored ARP request, say).
    if (remote)
      chains += fmt::format(
          "  chain relay_in {{\n    type filter hook ingress device \"{}\" priority 0; policy "
          "drop;\n  }}\n",
          m.remote->relay_interface);
    if (chains.empty()) return {};
    return fmt::format("table netdev {} {{\n{}}}\n", table, chains);
  }
  return {};
}

}  // namespace rocehil::testbed
