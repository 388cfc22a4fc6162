#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "rocehil/testbed/options.hpp"
#include "rocehil/testbed/paths.hpp"
#include "rocehil/testbed/topology.hpp"

namespace rocehil::testbed {

// What a host that is a QEMU guest (--vm) boots with, as text and argv. Pure: nothing here
// touches the machine (guests.hpp starts them).
//
// A guest boots Debian 12's distro kernel with a small busybox initramfs whose /init loads the
// virtio, 9p and overlay modules, mounts this machine's / read-only over 9p under a tmpfs overlay
// (what the guest writes stays in its memory) and switch_roots into the stage-2 script, which
// runs from this machine's files: it names the NICs, addresses them, loads rdma_rxe, makes the
// soft-RoCE device on the fabric NIC and starts sshd. Both print one line per outcome on the
// serial console, which `up` waits for: "rocehil-guest: ready ..." or "rocehil-guest: failed:
// WHY".

// The guest's NICs, named by stage 2 from their MAC addresses (the PCI order is QEMU's, not
// ours): the fabric NIC, where the soft-RoCE device sits, and the management NIC (ssh).
inline constexpr std::string_view guest_fabric_netdev = "eth0";
inline constexpr std::string_view guest_mgmt_netdev = "eth1";
inline constexpr std::string_view guest_rdma_device = "rxe0";
// rxe's GID table holds only RoCEv2 GIDs: index 0 the link-local one, 1 the IPv4 address.
inline constexpr int guest_gid_index = 1;
inline constexpr std::string_view guest_ready_marker = "rocehil-guest: ready";
inline constexpr std::string_view guest_failed_marker = "rocehil-guest: failed: ";

// The kernel a guest boots: what scripts/guest-kernel.sh unpacked (guest_kernel.hpp).
struct GuestKernel {
  std::string version;      // 6.1.0-56-amd64
  std::string vmlinuz;      // CACHE/VERSION/boot/vmlinuz-VERSION
  std::string modules_dir;  // CACHE/VERSION/lib/modules/VERSION
};

// Locally administered, unique per testbed, host and NIC: 52:54:00 (QEMU's prefix), a byte of
// the id's hash, the NIC (0 fabric, 1 management) and the host's number.
std::string guest_mac(std::string_view id, int host_number, bool mgmt);

// The host namespace's side: a tap per guest NIC, bridged with the namespace's veth, so the
// leaf and the management bridge see the guest where the namespace host's NIC was. For
// `ip -n NETNS -batch -`.
std::string guest_tap_batch(const Namespace& ns, const TestbedOptions& options);
// The taps' and bridges' names in the host namespace.
std::string guest_tap(std::string_view id, bool mgmt);
std::string guest_bridge(std::string_view id, bool mgmt);

// The initramfs's /init (busybox sh). It loads /modules/*.ko in the order their names sort
// (guest_kernel.hpp numbers them in modprobe's dependency order).
std::string guest_init_script();

// The stage-2 script, PID 1 of every guest; it reads its host's settings from the file the
// kernel command line's rocehil_guest= names.
std::string guest_stage2_script();

// That file, for `ns`: shell assignments of values the topology made (names, addresses, paths
// already checked to hold no quote).
// `live_dir`: guest_live_directory's answer, or empty.
std::string guest_settings(const Namespace& ns, const Topology& t, const TestbedOptions& options,
                           const TestbedPaths& paths, const GuestKernel& kernel,
                           const std::string& live_dir);

// The directory the guests see live, on a 9p device of its own outside their overlay: the build
// tree holding `agent` (the nearest of its three parent directories with a CMakeCache.txt, so
// the hw tests beside it come too), else the directory `agent` is in; empty without an agent.
// overlayfs does not allow changes under its lower layer: a guest ran a rocehil relinked while
// it was up with old pages of the new file, and crashed (SIGSEGV). `is_file` asks the file
// system (a parameter, for tests).
std::string guest_live_directory(const std::string& agent,
                                 const std::function<bool(const std::string&)>& is_file);

// kvm or tcg, never automatic: `automatic` is kvm when /dev/kvm exists and the CPU has vmx or
// svm (a software hypervisor behind /dev/kvm, with neither flag, cannot run a stock kernel).
GuestAccel choose_accel(GuestAccel requested, bool kvm_device, std::string_view cpu_flags);

// QEMU's argv for `ns`'s guest, run inside the host namespace (where its taps are).
std::vector<std::string> qemu_argv(const Namespace& ns, const Topology& t,
                                   const TestbedOptions& options, const TestbedPaths& paths,
                                   const GuestKernel& kernel, GuestAccel accel,
                                   const std::string& live_dir);

// The RoCEv2 GID of an IPv4 address as sysfs prints it (::ffff:a.b.c.d in eight groups);
// empty for text that is not a dotted quad.
std::string ipv4_mapped_gid(std::string_view address);

// The host number of a host namespace: 3 for h3.
int host_number(const Namespace& ns);

}  // namespace rocehil::testbed
