#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "rocehil/testbed/options.hpp"

namespace rocehil::testbed {

// The virtual fabric as data: what `up` creates, `status` compares against and the inventory
// describes. Pure: building it touches nothing.

enum class Role { host, leaf, spine, capture };
std::string_view to_string(Role role);

enum class LinkKind {
  host,    // host NIC <-> leaf
  uplink,  // leaf <-> spine
  mgmt,    // management bridge in the root namespace <-> any namespace (ssh, SNMP)
  mirror,  // spine mirror port <-> capture namespace, or <-> its relay (remote mirrors)
};
std::string_view to_string(LinkKind kind);

struct Interface {
  std::string name;                // as Linux sees it, prefixed with the testbed id
  std::string address;             // IPv4, empty for none
  int prefix_length = 32;          // of `address`; 32 with a point-to-point peer
  std::string peer_address;        // the other end of a point-to-point link, or empty
  std::string link;                // Link::name
  LinkKind kind = LinkKind::host;  // of its link: fabric ports are `host` and `uplink`
  int mbps = 0;                    // tbf rate on this end's egress, 0 for none
};

struct Route {
  std::string prefix;                  // e.g. 198.18.2.0/24
  std::vector<std::string> next_hops;  // several: ECMP over them
  std::vector<std::string> devices;    // one per next hop
};

struct Namespace {
  std::string name;   // short: h1, l1, s1, cap
  std::string netns;  // rocehil-<id>-<name>
  Role role = Role::host;
  int rack = 0;                // hosts and leaves; 0 for spines and the capture namespace
  std::string mgmt_address;    // every namespace's: sshd (hosts, capture) or snmpd (switches)
  std::string fabric_address;  // hosts: the NIC's address, the one RoCEv2 traffic uses
  std::vector<Interface> interfaces;
  std::vector<Route> routes;
};

struct LinkEnd {
  std::string ns;  // Namespace::name, or empty for the root namespace
  std::string interface;
};

struct Link {
  std::string name;  // h1-l1, l1-s2, mgmt-h1, s1-cap
  LinkKind kind = LinkKind::host;
  LinkEnd a;
  LinkEnd b;
  int mbps = 0;  // shaped rate, 0 for unshaped
};

// A remote mirror session (MirrorMode other than local): the spine's relay reads the copies
// from `relay_interface` and sends each, encapsulated, from `source` to `destination`.
struct RemoteMirror {
  MirrorMode mode = MirrorMode::erspan3;
  int session = 0;                 // ERSPAN session ID, GRE key: the spine's number
  std::string source;              // the spine's management address
  std::string destination;         // the capture namespace's management address
  std::string relay_interface;     // in the spine: the far end of `MirrorSession::target`
  std::vector<std::string> ports;  // in the spine: the mirrored ports, toward l1, l2, ...
  int truncate = 0;                // bytes of each frame kept, 0 for all that fits
};

// A capture interface and the spine links whose frames it receives, like a SPAN session.
struct MirrorSession {
  std::string spine;               // s1
  std::string interface;           // in the capture namespace: where the copies arrive
  std::vector<std::string> links;  // l1-s1, l2-s1, ...
  MirrorDirection direction = MirrorDirection::spine_to_leaf;
  std::string target;                  // in the spine: where tc mirred sends the copies
  std::optional<RemoteMirror> remote;  // unset for a local mirror
};

struct Topology {
  std::string id;
  std::string bridge;         // management bridge in the root namespace
  std::string mgmt_gateway;   // the bridge's address: where the controller's ssh comes from
  std::string mgmt_prefix;    // 198.19.K.0/23
  std::string fabric_prefix;  // 198.18.0.0/16
  std::vector<Namespace> namespaces;
  std::vector<Link> links;
  std::vector<MirrorSession> mirrors;

  const Namespace* find(std::string_view name) const;
};

// Addresses: rack r's hosts are 198.18.r.(10+k) behind leaf gateway 198.18.r.1; the link from
// leaf r to spine s is 198.18.(100+s).(2r) on the leaf and .(2r+1) on the spine; management is
// the /23 198.19.`mgmt_octet`.0 (K, even) with the root namespace at .K.1, the capture namespace
// at .K.2, host i at .K.(10+i) (past .K.255 into .(K+1).0), leaf r at .(K+1).(100+r) and spine s
// at .(K+1).(200+s). A local mirror is a veth from spine s (ID-cap) to the capture namespace
// (ID-m<s>); a remote one a veth pair inside the spine (ID-span, where copies go, and ID-relay,
// which its relay reads) whose copies reach the capture namespace's management interface.
// `options` must be valid and carry its id.
Topology build_topology(const TestbedOptions& options, int mgmt_octet);

// Who runs what on the management network: sshd (and slurmd) in hosts and the capture
// namespace, snmpd in switches, lldpd in hosts and switches.
bool is_switch(const Namespace& ns);
bool runs_sshd(const Namespace& ns);
bool runs_lldpd(const Namespace& ns);

// The interfaces that carry the fabric's traffic (host links and uplinks): where lldpd speaks,
// ECN marks, spines mirror and switches count PFC frames; never the management or mirror port.
bool is_fabric(const Interface& i);
std::vector<const Interface*> fabric_interfaces(const Namespace& ns);

// The third octet of the management network 198.19.K.0/`length` (23 or 24): the first K,
// starting from one derived from the id, whose network overlaps none of `used_prefixes` (routes
// already in the root namespace, "a.b.c.d/len"); even for a /23. nullopt when none is free.
std::optional<int> choose_mgmt_octet(std::string_view id,
                                     const std::vector<std::string>& used_prefixes,
                                     int length = mgmt_prefix_length);

// "rocehil-<id>-" — every namespace of the testbed starts with it.
std::string netns_prefix(std::string_view id);

}  // namespace rocehil::testbed
