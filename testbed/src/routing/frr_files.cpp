#include "rocehil/testbed/frr_files.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace rocehil::testbed {

int bgp_asn(const Namespace& ns) {
  if (ns.role == Role::spine) return spine_asn;
  if (ns.role == Role::leaf) return leaf_asn_base + ns.rack;
  return 0;
}

std::string rack_prefix(int rack) {
  return fmt::format("198.18.{}.0/24", rack);
}

std::vector<BgpNeighbor> bgp_neighbors(const Namespace& ns, const Topology& t) {
  std::vector<BgpNeighbor> out;
  if (!is_switch(ns)) return out;
  for (const auto& i : ns.interfaces) {
    if (i.kind != LinkKind::uplink) continue;
    for (const auto& l : t.links) {
      if (l.name != i.link) continue;
      const LinkEnd& far = l.a.ns == ns.name ? l.b : l.a;
      const Namespace* other = t.find(far.ns);
      if (other == nullptr) continue;
      out.push_back({i.peer_address, bgp_asn(*other), other->name, i.name, l.name});
    }
  }
  return out;
}

namespace {

// Every file starts alike: `frr defaults` must come first, and `datacenter` gives the timers a
// fabric uses (keepalive 3 s, hold 9 s, no advertisement delay).
std::string preamble(std::string_view daemon, const Namespace& ns, const Topology& t) {
  return fmt::format(
      "frr defaults datacenter\n"
      "! {} of switch {} in testbed {}, written by 'rocehil testbed up --routing bgp'\n"
      "hostname {}\n",
      daemon, ns.name, t.id, ns.name);
}

std::string bfdd_config(const TestbedOptions& o) {
  return fmt::format(
      "bfd\n"
      " profile fabric\n"
      "  detect-multiplier {}\n"
      "  receive-interval {}\n"
      "  transmit-interval {}\n"
      " exit\n"
      "exit\n",
      o.bfd.multiplier, o.bfd.interval_ms, o.bfd.interval_ms);
}

std::string bgpd_config(const Namespace& ns, const Topology& t) {
  int spines = 0;
  for (const auto& n : t.namespaces) spines += n.role == Role::spine;
  // The management address is unique in the testbed, as a real switch's loopback is.
  std::string out = fmt::format("router bgp {}\n bgp router-id {}\n", bgp_asn(ns), ns.mgmt_address);
  // No policy is needed between the fabric's own switches; a leaf announces its /24 without a
  // route for it in its table (its hosts are /32 peers, not a subnet on an interface).
  out +=
      " bgp log-neighbor-changes\n"
      " no bgp ebgp-requires-policy\n"
      " no bgp network import-check\n"
      // Each spine's path to a rack has the same AS path, so ECMP needs no relaxing; kept, as
      // RFC 7938 fabrics do, so a leaf still multipaths should spines ever differ in ASN.
      " bgp bestpath as-path multipath-relax\n"
      " neighbor fabric peer-group\n"
      " neighbor fabric bfd profile fabric\n"
      // Once a link is back, reconnect within a second rather than the profile's 10 s.
      " neighbor fabric timers connect 1\n";
  for (const auto& n : bgp_neighbors(ns, t))
    out += fmt::format(
        " neighbor {0} remote-as {1}\n neighbor {0} peer-group fabric\n neighbor {0} description "
        "{2} over {3}\n",
        n.address, n.asn, n.name, n.link);
  out += " address-family ipv4 unicast\n";
  if (ns.role == Role::leaf) out += fmt::format("  network {}\n", rack_prefix(ns.rack));
  out += fmt::format("  maximum-paths {}\n", std::max(spines, 1));
  out += " exit-address-family\nexit\n";
  return out;
}

}  // namespace

std::string frr_config(std::string_view daemon, const Namespace& ns, const Topology& t,
                       const TestbedOptions& options) {
  std::string out = preamble(daemon, ns, t);
  // Routes go to the kernel with their next hops, not as kernel nexthop objects: with those, FRR
  // 8.4 leaves a multipath route's group short of a member whose link went down and came back
  // (the kernel deletes the member's object with its link; zebra makes it again but never puts
  // it back in the group), so a leaf's second spine never returned after `testbed link up`.
  if (daemon == "zebra") out += "no zebra nexthop kernel enable\n";
  if (daemon == "bfdd") out += bfdd_config(options);
  if (daemon == "bgpd") out += bgpd_config(ns, t);
  return out;
}

std::vector<std::string> frr_argv(std::string_view daemon, const Namespace& ns,
                                  const TestbedPaths& paths) {
  const std::string sockets = TestbedPaths::frr_socket_dir(ns);
  std::vector<std::string> argv = {"ip",
                                   "netns",
                                   "exec",
                                   ns.netns,
                                   fmt::format("{}/{}", frr_daemon_dir, daemon),
                                   "--daemon",
                                   "-u",
                                   "root",
                                   "-g",
                                   "frrvty",
                                   "-P",
                                   "0",
                                   "-f",
                                   paths.frr_conf(ns, daemon),
                                   "-i",
                                   paths.frr_pid(ns, daemon),
                                   "-z",
                                   sockets + "/zserv.api",
                                   "--vty_socket",
                                   sockets,
                                   "--log",
                                   "file:" + paths.frr_log(ns, daemon)};
  // Its default, /var/run/frr/bfdd.sock, would be one for every switch of every testbed.
  if (daemon == "bfdd") argv.insert(argv.end(), {"--bfdctl", sockets + "/bfdd.sock"});
  return argv;
}

std::vector<std::string> vtysh_argv(const Namespace& ns, std::string_view daemon,
                                    std::string_view command) {
  return {"vtysh", "--vty_socket",      TestbedPaths::frr_socket_dir(ns), "-d", std::string(daemon),
          "-c",    std::string(command)};
}

}  // namespace rocehil::testbed
