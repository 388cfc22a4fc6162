#pragma once

// The switches' routing under --routing bgp, as data: what FRR's zebra, bfdd and bgpd in each
// leaf and spine are told, and how they are started. Pure, so the configuration is testable
// without root; `up` writes the files and starts the daemons (routing/frr_daemons.hpp).
//
// The RFC 7938 design: every spine in one ASN, each leaf in its own, an eBGP session on every
// leaf-spine link over the link's own addresses, each leaf announcing its rack's /24, and
// `maximum-paths` so a leaf installs one multipath route per other rack over every spine. BFD on
// every session (a profile with TestbedOptions::bfd's timers) takes a silent link's session down
// in interval x multiplier.

#include <string>
#include <string_view>
#include <vector>

#include "rocehil/testbed/options.hpp"
#include "rocehil/testbed/paths.hpp"
#include "rocehil/testbed/topology.hpp"

namespace rocehil::testbed {

inline constexpr int spine_asn = 65000;
inline constexpr int leaf_asn_base = 65100;  // leaf r is 65100 + r

// The ASN of a leaf or spine; 0 for a host or the capture namespace.
int bgp_asn(const Namespace& ns);

// Rack r's hosts' subnet, 198.18.r.0/24: what leaf r announces.
std::string rack_prefix(int rack);

// One eBGP session of a switch: one per leaf-spine link, to the far end's address on it.
struct BgpNeighbor {
  std::string address;    // the far end's address on the link: 198.18.(100+s).(2r+1) from l r
  int asn = 0;            // the far switch's
  std::string name;       // the far switch: s1, l2
  std::string interface;  // this switch's port on the link
  std::string link;       // l1-s1

  bool operator==(const BgpNeighbor&) const = default;
};

// A switch's sessions in the order of its ports; empty for anything else.
std::vector<BgpNeighbor> bgp_neighbors(const Namespace& ns, const Topology& t);

// The daemons a switch runs, in the order they start: zebra first (the others connect to it),
// bgpd last (it registers its BFD sessions through zebra with bfdd).
inline constexpr std::string_view frr_daemons[] = {"zebra", "bfdd", "bgpd"};

// Where Debian's frr package installs them; vtysh is in PATH.
inline constexpr std::string_view frr_daemon_dir = "/usr/lib/frr";

// The configuration file of `daemon` (one of frr_daemons) in switch `ns`: the hostname in all,
// the BFD profile "fabric" in bfdd's, the router, its sessions and the rack's announcement in
// bgpd's. One file per daemon, as FRR reads them with -f: a daemon given another's commands
// logs each as an error, and an `exit` after one it could not enter leaves configuration mode.
std::string frr_config(std::string_view daemon, const Namespace& ns, const Topology& t,
                       const TestbedOptions& options);

// The command that starts `daemon` in `ns`'s namespace, daemonized, with every path its own:
// configuration (-f), pid file (-i), zebra's socket (-z), vty sockets (--vty_socket), log file
// (--log), and bfdd's control socket (--bfdctl); no TCP vty port (-P 0). It runs as root in
// group frrvty: root reads the testbed's directory whatever its mode, and FRR refuses a user
// outside the vty group Debian's package was built with.
std::vector<std::string> frr_argv(std::string_view daemon, const Namespace& ns,
                                  const TestbedPaths& paths);

// vtysh running `command` (e.g. "show bgp summary json") against `daemon` of switch `ns`.
std::vector<std::string> vtysh_argv(const Namespace& ns, std::string_view daemon,
                                    std::string_view command);

}  // namespace rocehil::testbed
