// The inventory skeleton 'rocehil inventory discover' prints. Every value written comes from a
// probe of a host, so each is checked against the inventory's own rules before it is written:
// what would not load is left as a comment for the person editing the file.
#include <fmt/format.h>

#include "rocehil/inventory/names.hpp"
#include "rocehil/preflight/inventory_discover.hpp"
#include "rocehil/preflight/preflight.hpp"

namespace rocehil::preflight {

namespace {

namespace inv = rocehil::inventory;

std::string first_ipv4(const NetdevFacts& n) {
  for (const auto& cidr : n.addresses) {
    const std::string ip = cidr.substr(0, cidr.find('/'));
    if (inv::is_ipv4_address(ip)) return ip;
  }
  return "";
}

std::string host_name(const DiscoveredHost& h, std::size_t index) {
  if (inv::is_valid_name(h.target) && !inv::is_ip_address(h.target)) return h.target;
  if (inv::is_valid_name(h.facts.hostname)) return h.facts.hostname;
  return fmt::format("host{}", index + 1);
}

// A line "key: value", or the same line commented out with the reason when the value would not
// pass validation.
void field(std::string& out, std::string_view indent, std::string_view key,
           const std::string& value, bool valid) {
  if (value.empty()) return;
  if (valid)
    out += fmt::format("{}{}: {}\n", indent, key, value);
  else
    out += fmt::format("{}# {}: found a value the inventory does not accept; fill in by hand\n",
                       indent, key);
}

void netdev_fields(std::string& out, const NetdevFacts& n) {
  const std::string ip = first_ipv4(n);
  field(out, "        ", "ip", ip, !ip.empty());
  if (n.speed_mbps > 0)
    out += fmt::format("        link_gbps: {}\n", fmt::format("{:g}", n.speed_mbps / 1000.0));
  if (n.mtu > 0) out += fmt::format("        mtu: {}\n", n.mtu);
  if (n.numa_node >= 0) out += fmt::format("        numa: {}\n", n.numa_node);
}

int gpu_for(const HostFacts& facts, std::string_view device) {
  for (const auto& a : facts.gpu_nic)
    if (a.nic == device && (a.relation == "PIX" || a.relation == "PXB")) return a.gpu;
  return -1;
}

void rdma_nics(std::string& out, const HostFacts& facts) {
  int rail = 0;
  for (const auto& dev : facts.rdma) {
    for (const auto& port : dev.ports) {
      if (port.link_layer != "Ethernet") continue;
      out += fmt::format("      - device: {}\n", dev.name);
      out += fmt::format("        port: {}\n", port.port);
      const NetdevFacts* n = dev.netdev.empty() ? nullptr : facts.netdev_named(dev.netdev);
      const std::string ip = n ? first_ipv4(*n) : "";
      for (const auto& gid : port.gids)
        if (!ip.empty() && gid.type == "RoCE v2" && gid_carries_ip(gid.gid, ip)) {
          out +=
              fmt::format("        gid_index: {}  # the RoCE v2 GID carrying {}\n", gid.index, ip);
          break;
        }
      field(out, "        ", "netdev", dev.netdev, inv::is_valid_netdev(dev.netdev));
      if (n) netdev_fields(out, *n);
      if (const int gpu = gpu_for(facts, dev.name); gpu >= 0)
        out += fmt::format("        gpu: {}\n", gpu);
      out += fmt::format("        rail: {}\n", rail++);
    }
  }
}

void soft_nics(std::string& out, const DiscoveredHost& h) {
  int rail = 0;
  for (const auto& name : h.netdevs) {
    const NetdevFacts* n = h.facts.netdev_named(name);
    if (!n || !inv::is_valid_netdev(name)) continue;
    out += fmt::format("      - netdev: {}\n", name);
    netdev_fields(out, *n);
    out += fmt::format("        rail: {}\n", rail++);
  }
}

}  // namespace

std::string inventory_skeleton(const std::vector<DiscoveredHost>& hosts,
                               const remote::SshOptions& ssh) {
  std::string out;
  std::string targets;
  for (const auto& h : hosts) targets += (targets.empty() ? "" : ", ") + h.target;
  out += fmt::format(
      "# Written by 'rocehil inventory discover' from {}.\n"
      "# Check every value; then add racks, switches, links and captures (docs/inventory.md)\n"
      "# and run 'rocehil inventory validate' and 'rocehil inventory check' on it.\n",
      targets);
  bool any_rdma = false;
  for (const auto& h : hosts) any_rdma = any_rdma || (h.reachable && !h.facts.rdma.empty());
  out += "schema_version: 1\ndefaults:\n";
  if (!ssh.user.empty() || ssh.port != 0 || !ssh.identity.empty()) {
    out += "  ssh:\n";
    field(out, "    ", "user", ssh.user, inv::is_valid_user(ssh.user));
    if (ssh.port != 0) out += fmt::format("    port: {}\n", ssh.port);
    field(out, "    ", "identity", ssh.identity, inv::is_valid_local_path(ssh.identity));
  }
  out += fmt::format("  provider: {}\nhosts:\n", any_rdma ? "verbs" : "soft");
  for (std::size_t i = 0; i < hosts.size(); ++i) {
    const DiscoveredHost& h = hosts[i];
    if (!h.reachable) {
      out +=
          fmt::format("  # {}: not probed: {}\n", h.target.substr(0, 80), h.reason.substr(0, 200));
      continue;
    }
    out += fmt::format("  - name: {}\n", host_name(h, i));
    const std::string address = h.management_ip.empty() ? h.target : h.management_ip;
    field(out, "    ", "address", address, inv::is_valid_address(address));
    const bool rdma = !h.facts.rdma.empty();
    if (any_rdma && !rdma) out += "    provider: soft  # no RDMA device found\n";
    out += "    nics:\n";
    const std::size_t before = out.size();
    if (rdma)
      rdma_nics(out, h.facts);
    else
      soft_nics(out, h);
    if (out.size() == before) out += "      []\n";
  }
  return out;
}

}  // namespace rocehil::preflight
