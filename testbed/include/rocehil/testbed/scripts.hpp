#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "rocehil/testbed/options.hpp"
#include "rocehil/testbed/topology.hpp"

namespace rocehil::testbed {

// The commands that build a topology, as the batch text Debian's tools read (`ip -batch`,
// `tc -batch`, `nft -f`). Pure, so the fabric's configuration is testable without root; `up`
// feeds them to the tools one namespace at a time.

// `ip -batch` in the root namespace: every namespace.
std::string netns_add_batch(const Topology& t);

// `ip -batch` in the root namespace: the management bridge and every veth pair, each end created
// directly in its namespace so no name ever exists in the root namespace but the testbed's own.
std::string links_batch(const Topology& t);

// sysctl assignments for one namespace: no IPv6 (its router solicitations would pollute link
// counters and mirrors), forwarding and the L4 multipath hash on routers.
std::vector<std::string> sysctls(const Namespace& ns, const TestbedOptions& options);

// `ip -n NS -batch`: MTU, addresses, links up, routes (multipath on leaves); with
// --routing bgp no routes in leaves and spines, whose zebra writes them.
std::string namespace_ip_batch(const Namespace& ns, const TestbedOptions& options);

// `tc -n NS -batch`: a token bucket on every shaped interface's egress; on spines mirroring what
// they receive (--mirror leaf-to-spine or both), the filters that copy it to the capture port.
// Empty when there is nothing to do.
std::string namespace_tc_batch(const Namespace& ns, const Topology& t, const TestbedOptions& o);

// `nft -f` for a leaf or spine: one token bucket per egress fabric port; ECN-capable UDP 4791
// packets beyond its rate get CE, as a switch marks packets while its egress queue is over the ECN
// threshold. Empty for hosts, the capture namespace, or with --no-ecn.
//
// The bucket counts packets, not bytes: nftables sizes a byte bucket at one second of its rate
// plus the burst, so a byte limit would mark only after a second of overload. A packet bucket of
// `ecn_mark_burst_packets` behaves like a queue with that ECN threshold. The rate in Mb/s becomes
// packets/s at `ecn_mark_packet_bytes`, the IP length of a RoCEv2 packet carrying a 1024-byte MTU
// payload (IPv4 20 + UDP 8 + BTH 12 + 1024 + ICRC 4).
std::string namespace_nft_ruleset(const Namespace& ns, const Topology& t,
                                  const TestbedOptions& options);

// `nft -f` for the mirrors: in a spine, `dup` of what each leaf-facing port sends to the mirror
// port (unless --mirror leaf-to-spine), and for a remote mirror (--mirror-mode erspan, erspan2,
// gre) a drop of everything its relay's interface receives, once the relay's packet socket has
// read it; in the capture namespace of a remote mirror, a drop of IP protocol 47 on input. Empty
// elsewhere.
std::string mirror_nft_ruleset(const Namespace& ns, const Topology& t, const TestbedOptions& o);

// tbf burst in bytes: a millisecond at the rate, never below two frames.
long long burst_bytes(int mbps, int mtu);

// "tbf rate ...": the shaper of a port at `mbps` (> 0), as `up` adds it and `testbed set`
// replaces it, so the two never shape differently; `latency_ms` of queue before tail drop (1 on
// a --lossless testbed's hosts, whose NIC queue the switches' PFC headroom must hold).
std::string tbf_qdisc(int mbps, int mtu, int latency_ms = 5);

// The root qdisc of a shaped port (i.mbps > 0) of `ns`, as `up` adds it and `testbed set`
// replaces it: a --vm guest's NIC queue (guest_nic_queue_bytes deep), else tbf_qdisc with 1 ms
// of queue on a --lossless testbed's hosts and 5 ms elsewhere.
std::string port_qdisc(const Namespace& ns, const Interface& i, const TestbedOptions& o);

// --lossless: the ethtool commands that turn off a host's checksum and segmentation offloads on
// its fabric ports, so every frame a switch's packet socket reads is finished (scripts.cpp says
// why). Empty otherwise.
std::vector<std::vector<std::string>> offload_commands(const Namespace& ns,
                                                       const TestbedOptions& options);

// A --vm guest's NIC queue (the tbf in its host namespace): deep, so that it holds back rather
// than drops what the guest sends (scripts.cpp says why).
inline constexpr long long guest_nic_queue_bytes = 4LL << 20;

// "rocehil_<id>": the ECN marking table, in each leaf's and spine's namespace.
std::string ecn_table_name(std::string_view id);

inline constexpr int ecn_mark_packet_bytes = 1068;
long long ecn_mark_packets_per_second(int mbps);
// A millisecond of packets at the rate, at least 2: the ECN threshold of the virtual queue.
long long ecn_mark_burst_packets(int mbps);

}  // namespace rocehil::testbed
