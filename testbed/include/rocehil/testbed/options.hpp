#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace rocehil::testbed {

// Which frames of a spine's leaf-facing links its mirror interface copies. Each packet crossing
// a spine leaves it exactly once, so `spine_to_leaf` (the default) shows every crossing packet
// once, with the CE marks the spine set; `both` also copies what the spine receives, which is
// the only way to see link-local frames (PFC, PAUSE) that a leaf sends to the spine.
enum class MirrorDirection { spine_to_leaf, leaf_to_spine, both };

std::string_view to_string(MirrorDirection direction);

// How a spine's mirror reaches the capture namespace. `local`: a veth straight into it, like a
// SPAN port cabled to a capture server. The others are remote mirrors, as real fabrics send them:
// each copy is encapsulated on the spine and routed over the management network to the capture
// namespace's management address. This kernel has no GRE or ERSPAN module, so a relay process on
// each spine builds them in user space (mirror_relay.hpp).
enum class MirrorMode {
  local,
  erspan3,  // "erspan": ERSPAN type III, GRE protocol 0x22EB, with timestamps
  erspan2,  // ERSPAN type II, GRE protocol 0x88BE
  gre,      // GRE transparent Ethernet bridging (protocol 0x6558) with a key
};

std::string_view to_string(MirrorMode mode);  // local, erspan, erspan2, gre
// The mode named `text`; throws rocehil::Error (bad input) naming --mirror-mode and the choices.
MirrorMode parse_mirror_mode(std::string_view text);

// How a guest's CPU is run: `kvm` where the machine has hardware virtualisation (VT-x, AMD-V),
// `tcg` (QEMU's full emulation) anywhere; `automatic` picks kvm when /dev/kvm exists and the CPU
// flags show vmx or svm, tcg otherwise.
enum class GuestAccel { automatic, kvm, tcg };

std::string_view to_string(GuestAccel accel);  // auto, kvm, tcg
// Throws rocehil::Error (bad input) naming --vm-accel and the choices.
GuestAccel parse_guest_accel(std::string_view text);

// Hosts as QEMU guests (--vm): each host namespace runs a virtual machine booting Debian 12's
// distro kernel, with soft-RoCE (rdma_rxe) on its NIC, so the verbs provider runs through a
// real kernel RDMA stack and real libibverbs (guests.hpp).
struct GuestOptions {
  bool enabled = false;
  int memory_mb = 512;
  GuestAccel accel = GuestAccel::automatic;
  // Where scripts/guest-kernel.sh unpacked the kernel package (guest_kernel.hpp).
  std::string kernel_cache = "/var/cache/rocehil/guest-kernel";
};

// Rates a guest under full emulation can fill (about 70 Mb/s between two guests on this kind
// of machine): `up --vm` uses them for any rate not given, so the fabric, not the guests' CPU,
// stays the bottleneck.
inline constexpr int vm_host_mbps = 200;
inline constexpr int vm_uplink_mbps = 40;
inline constexpr int vm_ecn_mark_mbps = 30;

// How the switches route. `static_routes`: `up` writes every leaf's and spine's routes once
// (ECMP over the spines on leaves); a link taken down blackholes traffic at its far end.
// `bgp`: FRR's zebra, bgpd and bfdd in each switch, eBGP on every leaf-spine link in the RFC 7938
// style with BFD on each session, so a dead link is routed around (frr_files.hpp).
enum class Routing { static_routes, bgp };

std::string_view to_string(Routing routing);  // static, bgp
// Throws rocehil::Error (bad input) naming --routing and the choices.
Routing parse_routing(std::string_view text);

// BFD on every BGP session (--routing bgp): a session is declared down once `multiplier`
// packets in a row, sent every `interval_ms`, are missing: 300 ms with the defaults.
struct BfdTimers {
  int interval_ms = 100;
  int multiplier = 3;
};

// The lossless switches (--lossless): a forwarding process per leaf and spine runs the model of
// a RoCE switch port on its veths (per-class queues, WRED with ECN by queue depth, PFC sent and
// obeyed, a PFC watchdog) instead of the kernel's forwarding and one tbf per port. The knobs are
// settings (`switch.*`, fabric_settings.hpp), so --set, bisect and trend vary them; bytes are
// per queue (WRED) and per ingress port and priority (XOFF), the same on every port.
struct SwitchKnobs {
  bool ecn_enable = true;                 // switch.ecn_enable: WRED marks CE on ECN-capable packets
  std::vector<int> pfc_priorities{3, 4};  // switch.pfc_priorities: lossless classes (empty: none)
  // ECN before PFC, as RoCE fabrics set them: Kmax under XOFF, so DCQCN slows the senders
  // before a pause is needed (with Kmin 125 and Kmax 500 KB, the queues reach XOFF with 3% of
  // packets marked and PFC does all the work: measured in docs/rehearsal.md).
  int wred_kmin_kb = 50;        // switch.wred_kmin_kb: marking starts (0.4 ms at 1 Gb/s)
  int wred_kmax_kb = 200;       // switch.wred_kmax_kb: every packet marked from here
  int wred_pmax_percent = 20;   // switch.wred_pmax_percent: probability just under kmax
  int xoff_kb = 250;                      // switch.xoff_kb: ingress bytes that send XOFF
  // switch.dscp_to_tc: "DSCP:TC,..." over SONiC's default map (qos_profile.hpp); empty: SONiC's.
  std::string dscp_to_tc{};
  int watchdog_detection_ms = 200;    // switch.pfc_watchdog_detection_ms (SONiC's default)
  int watchdog_restoration_ms = 200;  // switch.pfc_watchdog_restoration_ms
};

struct TestbedOptions {
  std::string dir;  // where keys, configs, state and inventory.yaml are written
  std::string id;   // prefixes every name; empty: derived from dir
  int hosts = 4;
  int racks = 2;
  int spines = 2;
  int host_mbps = 1000;     // host <-> leaf links; 0 leaves them unshaped
  int uplink_mbps = 400;    // leaf <-> spine links; 0 leaves them unshaped
  int ecn_mark_mbps = 300;  // above this rate per egress port, ECN-capable RoCEv2 gets CE
  bool ecn = true;
  int mtu = 9000;
  MirrorDirection mirror = MirrorDirection::spine_to_leaf;
  MirrorMode mirror_mode = MirrorMode::local;
  // Remote modes: bytes of each mirrored frame kept (0: the whole frame, as far as one IPv4
  // packet on the management network holds it), as real sessions often keep 128.
  int mirror_truncate = 0;
  // The routers' multipath hash seed (net.ipv4.fib_multipath_hash_seed): with the same seed, a
  // flow takes the same spine on every run, so QP scaling and ECMP results repeat. 0: the
  // kernel's random seed, different on every boot.
  std::uint32_t ecmp_seed = 1;
  // The rocehil binary the hosts run as their agent, written as the inventory's defaults.agent
  // (the namespaces share this machine's file system); empty: not written.
  std::string agent{};
  // A Slurm cluster over the namespaces (slurm_cluster.hpp): munged and slurmctld on this
  // machine, a slurmd in every namespace that runs sshd (hosts and capture), named as its host.
  bool slurm = false;
  GuestOptions vm{};
  Routing routing = Routing::static_routes;
  BfdTimers bfd{};
  bool lossless = false;
  SwitchKnobs knobs{};
};

// Limits that keep names and addresses inside their fields: interface names are 15 characters,
// racks and spines index octets of 198.18.0.0/16, a rack's hosts an octet of its /24, and the
// management network's /23 holds every host, leaf and spine (topology.hpp).
inline constexpr int max_hosts = 256;
inline constexpr int max_hosts_per_rack = 244;  // 198.18.r.11 to 198.18.r.254
// The management network is always a /23, 198.19.K.0 with an even K: hosts count from
// 198.19.K.11 (the last ones spill into 198.19.(K+1).0 to .10), leaves sit at
// 198.19.(K+1).(100+r) and spines at 198.19.(K+1).(200+s), so no count of them overlaps.
inline constexpr int mgmt_prefix_length = 23;
inline constexpr int max_racks = 64;
inline constexpr int max_spines = 32;
inline constexpr std::size_t max_id_length = 6;
// A truncated mirror keeps at least the frame's Ethernet header.
inline constexpr int min_mirror_truncate = 14;

// FNV-1a of `text`: the same on every run and build, for names and addresses derived from ids.
std::uint32_t stable_hash(std::string_view text);

// The id for a directory when --id is not given: 't' and four hex digits of a hash of its
// absolute path, so the same directory always gets the same id.
std::string derive_id(std::string_view absolute_dir);

// Throws rocehil::Error (bad input) naming the option and the fix for the first invalid value.
void validate(const TestbedOptions& options);

}  // namespace rocehil::testbed
