// What `inventory check` concludes from one probe: each item compares a fact with what the
// inventory says, and a failed item says what to do about it.
#include "rocehil/preflight/preflight.hpp"

#include <arpa/inet.h>
#include <fmt/format.h>

#include <fmt/ranges.h>
#include <array>
#include <cstring>

namespace rocehil::preflight {

namespace {

using inventory::Host;
using inventory::Nic;

CheckItem item(std::string name, CheckStatus status, std::string detail) {
  CheckItem i;
  i.name = std::move(name);
  i.status = status;
  i.detail = std::move(detail);
  return i;
}

std::string priorities(const std::array<bool, 8>& p) {
  std::string s;
  for (std::size_t i = 0; i < 8; ++i)
    if (p[i]) {
      if (!s.empty()) s += ',';
      s += std::to_string(i);
    }
  return s.empty() ? "none" : s;
}

bool any(const std::array<bool, 8>& p) {
  for (const bool b : p)
    if (b) return true;
  return false;
}

std::string address_of(std::string_view cidr) {
  return std::string(cidr.substr(0, cidr.find('/')));
}

// "10.0.0.1/24" holds 10.0.0.1; "2001:db8::2/64" holds 2001:DB8:0::2 (compared as bytes).
bool holds_address(std::string_view cidr, const std::string& ip) {
  const std::string a = address_of(cidr);
  if (a == ip) return true;
  std::array<unsigned char, 16> x{}, y{};
  return inet_pton(AF_INET6, a.c_str(), x.data()) == 1 &&
         inet_pton(AF_INET6, ip.c_str(), y.data()) == 1 && x == y;
}

const RdmaDeviceFacts* find_device(const HostFacts& f, std::string_view name) {
  for (const auto& d : f.rdma)
    if (d.name == name) return &d;
  return nullptr;
}

}  // namespace

// The GID table holds an IPv4 address as ::ffff:a.b.c.d.
bool gid_carries_ip(std::string_view gid, std::string_view ip) {
  std::array<unsigned char, 16> g{}, want{};
  if (inet_pton(AF_INET6, std::string(gid).c_str(), g.data()) != 1) return false;
  in_addr v4{};
  if (inet_pton(AF_INET, std::string(ip).c_str(), &v4) == 1) {
    want[10] = want[11] = 0xff;
    std::memcpy(want.data() + 12, &v4, 4);
  } else if (inet_pton(AF_INET6, std::string(ip).c_str(), want.data()) != 1) {
    return false;
  }
  return g == want;
}

std::string_view to_string(CheckStatus s) {
  switch (s) {
    case CheckStatus::ok: return "ok";
    case CheckStatus::info: return "info";
    case CheckStatus::warn: return "warn";
    case CheckStatus::fail: return "fail";
    case CheckStatus::skip: return "skip";
  }
  return "?";
}

std::string_view to_string(HostVerdict v) {
  switch (v) {
    case HostVerdict::ok: return "ok";
    case HostVerdict::soft_only: return "soft only";
    case HostVerdict::failed: return "failed";
    case HostVerdict::unreachable: return "unreachable";
  }
  return "?";
}

namespace {

void check_agent(const Host& host, const HostFacts& f, std::string_view version,
                 std::vector<CheckItem>& out) {
  if (f.agent_version == version) {
    out.push_back(item("agent", CheckStatus::ok, f.agent_version));
  } else if (f.agent_version.empty() && host.agent.find('/') == std::string::npos) {
    out.push_back(
        item("agent", CheckStatus::fail,
             fmt::format("'{}' is not on the host's PATH; set 'agent' to an absolute "
                         "path and run 'rocehil inventory check FILE --deploy' to install "
                         "it there (--deploy=binary copies this binary)",
                         host.agent)));
  } else if (f.agent_version.empty() &&
             (f.agent_problem == "not found" || f.agent_problem == "not executable")) {
    out.push_back(
        item("agent", CheckStatus::fail,
             fmt::format("{} at {}; run 'rocehil inventory check FILE --deploy' to install "
                         "it there (--deploy=binary copies this binary)",
                         f.agent_problem, host.agent)));
  } else if (f.agent_version.empty()) {
    // It is there but does not run: a binary for another architecture or libc, or a broken copy.
    out.push_back(
        item("agent", CheckStatus::fail,
             fmt::format("{} --version failed ({}); run 'rocehil inventory check FILE "
                         "--deploy' to install it there (--deploy=binary copies this binary)",
                         host.agent, f.agent_problem.empty() ? "no answer" : f.agent_problem)));
  } else {
    out.push_back(item("agent", CheckStatus::fail,
                       fmt::format("agent is {}, this controller is {}; --deploy installs this "
                                   "version's package (--deploy=binary copies this binary)",
                                   f.agent_version, version)));
  }
}

void check_netdev(const Host& host, const Nic& nic, const std::string& netdev, const HostFacts& f,
                  const RdmaPortFacts* port, std::vector<CheckItem>& out) {
  const NetdevFacts* n = f.netdev_named(netdev);
  const std::string name = "netdev " + netdev;
  if (!n || n->operstate == "missing") {
    out.push_back(item(name, CheckStatus::fail,
                       fmt::format("{} is not on host {}; 'rocehil inventory discover {}' lists "
                                   "its interfaces",
                                   netdev, host.name, host.name)));
    return;
  }
  std::string carried;
  for (const auto& a : n->addresses)
    if (!nic.ip.empty() && holds_address(a, nic.ip)) carried = a;
  // The kernel's operstates (RFC 2863): a link on a down lower device or an absent one is down.
  if (n->operstate == "down" || n->operstate == "lowerlayerdown" || n->operstate == "notpresent")
    out.push_back(item(name, CheckStatus::fail,
                       fmt::format("is {}; bring it up (ip link set dev {} up) and check the cable",
                                   n->operstate, netdev)));
  else if (!nic.ip.empty() && carried.empty())
    out.push_back(
        item(name, CheckStatus::fail,
             fmt::format("does not carry {}; it has {}", nic.ip,
                         n->addresses.empty() ? "no address"
                                              : fmt::format("{}", fmt::join(n->addresses, ", ")))));
  else
    out.push_back(item(name, CheckStatus::ok,
                       fmt::format("{}{}", n->operstate, carried.empty() ? "" : ", " + carried)));

  const std::string mtu = fmt::format(
      "{}{}", n->mtu,
      port && port->active_mtu > 0 ? fmt::format(" (RoCE active_mtu {})", port->active_mtu) : "");
  if (nic.mtu > 0 && n->mtu != nic.mtu)
    out.push_back(item("mtu " + netdev, CheckStatus::fail,
                       fmt::format("mtu {}, the inventory says {}", n->mtu, nic.mtu)));
  else
    out.push_back(item("mtu " + netdev, CheckStatus::ok, mtu));

  // A port that came up slower than it should is the classic bad cable or optic.
  if (nic.link_gbps > 0 && n->speed_mbps > 0) {
    const double gbps = n->speed_mbps / 1000.0;
    if (gbps + 1e-9 < nic.link_gbps)
      out.push_back(item("speed " + netdev, CheckStatus::fail,
                         fmt::format("link is up at {:g} Gb/s, the inventory says {:g}; check the "
                                     "cable, the optic and the switch port",
                                     gbps, nic.link_gbps)));
    else
      out.push_back(item("speed " + netdev, CheckStatus::ok, fmt::format("{:g} Gb/s", gbps)));
  }
  if (n->pfc) {
    std::string detail = fmt::format("priorities {} ({})", priorities(*n->pfc), n->pfc_source);
    if (!n->trust.empty()) detail += ", trust " + n->trust;
    const bool quiet = !any(*n->pfc) && host.provider == inventory::Provider::verbs;
    out.push_back(
        item("pfc " + netdev, quiet ? CheckStatus::warn : CheckStatus::info,
             quiet ? "no priority has PFC enabled; RoCE without PFC relies on ECN alone" : detail));
  } else {
    out.push_back(
        item("pfc " + netdev, CheckStatus::skip, "not exposed (no mlnx_qos or dcb on the host)"));
  }
  if (n->ecn_np || n->ecn_rp) {
    const std::string np = n->ecn_np ? priorities(*n->ecn_np) : "?";
    const std::string rp = n->ecn_rp ? priorities(*n->ecn_rp) : "?";
    const bool off = (n->ecn_np && !any(*n->ecn_np)) || (n->ecn_rp && !any(*n->ecn_rp));
    out.push_back(item(
        "ecn " + netdev,
        off && host.provider == inventory::Provider::verbs ? CheckStatus::warn : CheckStatus::info,
        fmt::format("roce_np {} roce_rp {}{}", np, rp,
                    off ? "; ECN is off on some side, so DCQCN cannot react" : "")));
  } else {
    out.push_back(
        item("ecn " + netdev, CheckStatus::skip, "not exposed (no ecn/roce_np in sysfs)"));
  }
}

const RdmaPortFacts* check_rdma(const Host& host, const Nic& nic, const HostFacts& f,
                                std::vector<CheckItem>& out) {
  const std::string name = fmt::format("rdma {}/{}", nic.device, nic.port);
  const RdmaDeviceFacts* d = find_device(f, nic.device);
  if (!d) {
    std::string present;
    for (const auto& other : f.rdma) {
      if (!present.empty()) present += ", ";
      present += other.name;
    }
    out.push_back(item(name, CheckStatus::fail,
                       fmt::format("no RDMA device {} on {}; {}", nic.device, host.name,
                                   present.empty() ? "it has none" : "it has " + present)));
    return nullptr;
  }
  const RdmaPortFacts* port = nullptr;
  for (const auto& p : d->ports)
    if (p.port == nic.port) port = &p;
  if (!port) {
    out.push_back(
        item(name, CheckStatus::fail, fmt::format("{} has no port {}", nic.device, nic.port)));
    return nullptr;
  }
  if (port->link_layer != "Ethernet")
    out.push_back(item(name, CheckStatus::fail,
                       fmt::format("link layer is {}, not Ethernet: this port does not run RoCE",
                                   port->link_layer)));
  else if (port->state != "ACTIVE")
    out.push_back(item(name, CheckStatus::fail,
                       fmt::format("port {} is {}; check the cable and the switch port", nic.port,
                                   port->state.empty() ? "in an unknown state" : port->state)));
  else
    out.push_back(item(name, CheckStatus::ok, fmt::format("ACTIVE, {}", port->phys_state)));

  // The RoCE v2 GID that carries the NIC's address, wherever it is in the table.
  int v2_index = -1;
  for (const auto& g : port->gids)
    if (g.type == "RoCE v2" && !nic.ip.empty() && gid_carries_ip(g.gid, nic.ip)) {
      v2_index = g.index;
      break;
    }
  if (nic.gid_index < 0) {
    if (v2_index >= 0)
      out.push_back(item(fmt::format("gid {}/{}", nic.device, nic.port), CheckStatus::info,
                         fmt::format("RoCE v2 GID for {} is index {}", nic.ip, v2_index)));
    else if (!nic.ip.empty())
      out.push_back(item(fmt::format("gid {}/{}", nic.device, nic.port), CheckStatus::fail,
                         fmt::format("no RoCE v2 GID carries {}; is the address on {}?", nic.ip,
                                     d->netdev.empty() ? "the device's netdev" : d->netdev)));
  } else {
    const std::string gname = fmt::format("gid {}/{}/{}", nic.device, nic.port, nic.gid_index);
    const GidEntry* g = nullptr;
    for (const auto& e : port->gids)
      if (e.index == nic.gid_index) g = &e;
    const std::string better =
        v2_index >= 0 ? fmt::format("; use the RoCE v2 GID at index {}", v2_index) : "";
    if (nic.gid_index >= port->gid_table_len)
      out.push_back(
          item(gname, CheckStatus::fail,
               fmt::format("gid_index {} but port {} has {} GIDs (run 'rocehil "
                           "inventory discover {}'){}",
                           nic.gid_index, nic.port, port->gid_table_len, host.name, better)));
    else if (!g)
      out.push_back(item(gname, CheckStatus::fail, "the GID at this index is empty" + better));
    else if (g->type != "RoCE v2")
      out.push_back(item(gname, CheckStatus::fail, fmt::format("is {}{}", g->type, better)));
    else if (!nic.ip.empty() && !gid_carries_ip(g->gid, nic.ip))
      out.push_back(item(gname, CheckStatus::fail,
                         fmt::format("{} does not carry {}{}", g->gid, nic.ip, better)));
    else
      out.push_back(item(gname, CheckStatus::ok, fmt::format("RoCE v2 {}", g->gid)));
  }

  const NetdevFacts* n = d->netdev.empty() ? nullptr : f.netdev_named(d->netdev);
  std::string firmware = n && !n->firmware.empty() ? n->firmware : d->fw_ver;
  std::string detail =
      n && !n->driver.empty()
          ? fmt::format("{} {}, firmware {}", n->driver, n->driver_version, firmware)
          : fmt::format("firmware {}", firmware.empty() ? "unknown" : firmware);
  out.push_back(item("firmware " + nic.device, CheckStatus::info, detail));
  return port;
}

void check_gpu(const Nic& nic, const HostFacts& f, std::vector<CheckItem>& out) {
  const std::string name = fmt::format("gpu {}-{}", nic.gpu, nic.device);
  if (!f.nvidia_smi) {
    out.push_back(item(name, CheckStatus::skip, "nvidia-smi not installed"));
    return;
  }
  for (const auto& a : f.gpu_nic) {
    if (a.gpu != nic.gpu || a.nic != nic.device) continue;
    if (a.relation == "PIX" || a.relation == "PXB")
      out.push_back(item(name, CheckStatus::ok, a.relation + ": same PCIe switch"));
    else if (a.relation == "SYS")
      out.push_back(item(name, CheckStatus::fail,
                         fmt::format("SYS: traffic crosses the CPU interconnect; pair GPU {} with "
                                     "a NIC on its PCIe switch",
                                     nic.gpu)));
    else
      out.push_back(item(name, CheckStatus::warn,
                         fmt::format("{}: traffic crosses the host bridge; pair GPU {} with a NIC "
                                     "on its PCIe switch",
                                     a.relation, nic.gpu)));
    return;
  }
  out.push_back(
      item(name, CheckStatus::warn,
           fmt::format("nvidia-smi topo -m lists no GPU {} with NIC {}", nic.gpu, nic.device)));
}

}  // namespace

std::vector<CheckItem> evaluate_host(const Host& host, const HostFacts& facts,
                                     std::string_view controller_version) {
  std::vector<CheckItem> out;
  check_agent(host, facts, controller_version, out);
  for (const Nic& nic : host.nics) {
    const RdmaPortFacts* port = nullptr;
    if (!nic.device.empty() && !facts.rdma.empty()) port = check_rdma(host, nic, facts, out);
    std::string netdev = nic.netdev;
    if (netdev.empty())
      if (const RdmaDeviceFacts* d = find_device(facts, nic.device)) netdev = d->netdev;
    if (!netdev.empty()) check_netdev(host, nic, netdev, facts, port, out);
    if (nic.gpu >= 0 && !nic.device.empty()) check_gpu(nic, facts, out);
  }
  if (facts.rdma.empty()) {
    if (host.provider == inventory::Provider::verbs)
      out.push_back(item("rdma", CheckStatus::fail,
                         fmt::format("no RDMA device on {}, and the inventory asks for the verbs "
                                     "provider; install the RNIC driver, or set provider: soft "
                                     "for this host",
                                     host.name)));
    else
      out.push_back(item("rdma", CheckStatus::info, "no RDMA device: soft only"));
  }
  return out;
}

HostVerdict verdict_of(const Host& host, const HostFacts& facts,
                       const std::vector<CheckItem>& items) {
  for (const auto& i : items)
    if (i.status == CheckStatus::fail) return HostVerdict::failed;
  if (facts.rdma.empty() && host.provider == inventory::Provider::soft)
    return HostVerdict::soft_only;
  return HostVerdict::ok;
}

}  // namespace rocehil::preflight
