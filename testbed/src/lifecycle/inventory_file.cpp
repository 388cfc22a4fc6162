#include "rocehil/testbed/inventory_file.hpp"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "rocehil/testbed/guest_files.hpp"

namespace rocehil::testbed {

namespace {

// Link speeds in Gb/s as an inventory states them; 0 marks a link the testbed leaves unshaped.
double gbps(int mbps) {
  return mbps / 1000.0;
}

void write_ssh(YAML::Emitter& y, const TestbedPaths& paths) {
  y << YAML::Key << "ssh" << YAML::Value << YAML::BeginMap;
  y << YAML::Key << "user" << YAML::Value << "root";
  y << YAML::Key << "port" << YAML::Value << 22;
  y << YAML::Key << "identity" << YAML::Value << paths.identity();
  y << YAML::Key << "known_hosts" << YAML::Value << paths.known_hosts();
  y << YAML::Key << "options" << YAML::Value << YAML::Flow << YAML::BeginSeq << "IdentitiesOnly=yes"
    << "StrictHostKeyChecking=yes" << YAML::EndSeq;
  y << YAML::EndMap;
}

void write_host(YAML::Emitter& y, const Namespace& ns, const TestbedOptions& o) {
  y << YAML::BeginMap;
  y << YAML::Key << "name" << YAML::Value << ns.name;
  y << YAML::Key << "address" << YAML::Value << ns.mgmt_address;
  if (ns.role == Role::host) y << YAML::Key << "rack" << YAML::Value << fmt::format("r{}", ns.rack);
  y << YAML::Key << "labels" << YAML::Value << YAML::Flow << YAML::BeginSeq
    << (ns.role == Role::host ? "gpu" : "capture") << YAML::EndSeq;
  // A guest is reached over ssh only: a local launcher in its namespace would run beside it.
  if (!(o.vm.enabled && ns.role == Role::host))
    y << YAML::Key << "netns" << YAML::Value << ns.netns;
  // The capture namespace only captures; with guests the defaults say verbs, which it has not.
  if (o.vm.enabled && ns.role == Role::capture)
    y << YAML::Key << "provider" << YAML::Value << "soft";
  y << YAML::Key << "nics" << YAML::Value << YAML::BeginSeq;
  if (ns.role == Role::host) {
    const Interface& nic = ns.interfaces.front();
    y << YAML::BeginMap;
    if (o.vm.enabled) {
      // The guest's soft-RoCE device on its fabric NIC (guest_files.hpp).
      y << YAML::Key << "device" << YAML::Value << std::string(guest_rdma_device);
      y << YAML::Key << "port" << YAML::Value << 1;
      y << YAML::Key << "gid_index" << YAML::Value << guest_gid_index;
    }
    y << YAML::Key << "netdev" << YAML::Value
      << (o.vm.enabled ? std::string(guest_fabric_netdev) : nic.name);
    y << YAML::Key << "ip" << YAML::Value << nic.address;
    y << YAML::Key << "link_gbps" << YAML::Value << gbps(o.host_mbps);
    y << YAML::Key << "rail" << YAML::Value << 0;
    y << YAML::Key << "link" << YAML::Value << nic.link;
    y << YAML::EndMap;
  }
  y << YAML::EndSeq << YAML::EndMap;
}

}  // namespace

std::string inventory_yaml(const Topology& t, const TestbedOptions& o, const TestbedPaths& paths) {
  YAML::Emitter y;
  // Link speeds such as 0.4 Gb/s print as written, not as the nearest double's 17 digits.
  y.SetDoublePrecision(9);
  y << YAML::Comment(fmt::format(
      "Written by 'rocehil testbed up' for testbed {} in {}.\n"
      "A virtual fabric of network namespaces: hosts are reached over ssh and switches over\n"
      "SNMP on the management network {}; RoCEv2 traffic uses the NIC addresses in {}.{}",
      t.id, o.dir, t.mgmt_prefix, t.fabric_prefix,
      o.vm.enabled ? "\nThe hosts are QEMU guests with soft-RoCE (rdma_rxe) on their NIC." : ""));
  y << YAML::BeginMap;
  y << YAML::Key << "schema_version" << YAML::Value << 1;
  y << YAML::Key << "name" << YAML::Value << fmt::format("testbed-{}", t.id);
  y << YAML::Key << "defaults" << YAML::Value << YAML::BeginMap;
  write_ssh(y, paths);
  if (!o.agent.empty()) y << YAML::Key << "agent" << YAML::Value << o.agent;
  // Guests have real kernel RDMA (rdma_rxe) behind libibverbs; namespaces the soft provider.
  y << YAML::Key << "provider" << YAML::Value << (o.vm.enabled ? "verbs" : "soft");
  y << YAML::Key << "link_gbps" << YAML::Value << gbps(o.host_mbps);
  y << YAML::EndMap;

  y << YAML::Key << "hosts" << YAML::Value << YAML::BeginSeq;
  for (const auto& ns : t.namespaces)
    if (ns.role == Role::host || ns.role == Role::capture) write_host(y, ns, o);
  y << YAML::EndSeq;

  y << YAML::Key << "racks" << YAML::Value << YAML::BeginSeq;
  for (const auto& leaf : t.namespaces) {
    if (leaf.role != Role::leaf) continue;
    y << YAML::BeginMap << YAML::Key << "name" << YAML::Value << fmt::format("r{}", leaf.rack);
    y << YAML::Key << "leaf" << YAML::Value << leaf.name;
    y << YAML::Key << "hosts" << YAML::Value << YAML::Flow << YAML::BeginSeq;
    for (const auto& h : t.namespaces)
      if (h.role == Role::host && h.rack == leaf.rack) y << h.name;
    y << YAML::EndSeq << YAML::EndMap;
  }
  y << YAML::EndSeq;

  y << YAML::Key << "switches" << YAML::Value << YAML::BeginSeq;
  for (const auto& ns : t.namespaces) {
    if (ns.role != Role::leaf && ns.role != Role::spine) continue;
    y << YAML::Flow << YAML::BeginMap << YAML::Key << "name" << YAML::Value << ns.name;
    y << YAML::Key << "role" << YAML::Value << std::string(to_string(ns.role));
    if (ns.role == Role::leaf)
      y << YAML::Key << "rack" << YAML::Value << fmt::format("r{}", ns.rack);
    y << YAML::Key << "netns" << YAML::Value << ns.netns;
    // Polled as a real switch is: SNMP on its management address, the community in a file.
    y << YAML::Key << "address" << YAML::Value << ns.mgmt_address;
    y << YAML::Key << "snmp" << YAML::Value << YAML::BeginMap;
    y << YAML::Key << "version" << YAML::Value << "2c";
    y << YAML::Key << "community_file" << YAML::Value << paths.snmp_community();
    // Only for `rocehil switches port`: the testbed's link events use netns.
    y << YAML::Key << "write_community_file" << YAML::Value << paths.snmp_write_community();
    y << YAML::EndMap << YAML::EndMap;
  }
  y << YAML::EndSeq;

  y << YAML::Key << "links" << YAML::Value << YAML::BeginSeq;
  for (const auto& l : t.links) {
    if (l.kind != LinkKind::host && l.kind != LinkKind::uplink) continue;
    y << YAML::Flow << YAML::BeginMap << YAML::Key << "name" << YAML::Value << l.name;
    y << YAML::Key << "a" << YAML::Value << fmt::format("{}:{}", l.a.ns, l.a.interface);
    y << YAML::Key << "b" << YAML::Value << fmt::format("{}:{}", l.b.ns, l.b.interface);
    y << YAML::Key << "gbps" << YAML::Value << gbps(l.mbps) << YAML::EndMap;
  }
  y << YAML::EndSeq;

  y << YAML::Key << "captures" << YAML::Value << YAML::BeginSeq;
  for (const auto& m : t.mirrors) {
    y << YAML::BeginMap << YAML::Key << "name" << YAML::Value << m.spine + "-mirror";
    y << YAML::Key << "host" << YAML::Value << "cap";
    y << YAML::Key << "interface" << YAML::Value << m.interface;
    y << YAML::Key << "backend" << YAML::Value << "pcap";
    y << YAML::Key << "link_gbps" << YAML::Value << gbps(o.uplink_mbps);
    y << YAML::Key << "mirrors" << YAML::Value << YAML::BeginMap;
    y << YAML::Key << "switch" << YAML::Value << m.spine;
    y << YAML::Key << "links" << YAML::Value << YAML::Flow << m.links;
    y << YAML::Key << "direction" << YAML::Value << std::string(to_string(m.direction));
    y << YAML::EndMap;
    // A remote mirror arrives on the capture server's management interface among its other
    // traffic: the session and the switch's address pick its copies out.
    if (m.remote) {
      y << YAML::Key << "remote" << YAML::Value << YAML::Flow << YAML::BeginMap;
      y << YAML::Key << "session" << YAML::Value << m.remote->session;
      y << YAML::Key << "source" << YAML::Value << m.remote->source;
      y << YAML::EndMap;
    }
    y << YAML::EndMap;
  }
  y << YAML::EndSeq;
  y << YAML::EndMap;
  return std::string(y.c_str()) + "\n";
}

}  // namespace rocehil::testbed
