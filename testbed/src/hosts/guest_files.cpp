#include "rocehil/testbed/guest_files.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cstdint>

#include "tools/process.hpp"

namespace rocehil::testbed {

namespace {

const Interface* interface_of(const Namespace& ns, LinkKind kind) {
  for (const auto& i : ns.interfaces)
    if (i.kind == kind) return &i;
  return nullptr;
}

std::string ifname(std::string_view id, std::string_view local) {
  return fmt::format("{}-{}", id, local);
}

}  // namespace

std::string ipv4_mapped_gid(std::string_view address) {
  unsigned octets[4] = {0, 0, 0, 0};
  const char* at = address.data();
  const char* const end = address.data() + address.size();
  for (int i = 0; i < 4; ++i) {
    if (i > 0) {
      if (at == end || *at != '.') return {};
      ++at;
    }
    const auto [next, ec] = std::from_chars(at, end, octets[i]);
    if (ec != std::errc() || octets[i] > 255) return {};
    at = next;
  }
  if (at != end) return {};
  return fmt::format("0000:0000:0000:0000:0000:ffff:{:02x}{:02x}:{:02x}{:02x}", octets[0],
                     octets[1], octets[2], octets[3]);
}

int host_number(const Namespace& ns) {
  int n = 0;
  const std::string_view digits = std::string_view(ns.name).substr(1);
  std::from_chars(digits.data(), digits.data() + digits.size(), n);
  return n;
}

std::string guest_mac(std::string_view id, int host_number, bool mgmt) {
  return fmt::format("52:54:00:{:02x}:{:02x}:{:02x}", stable_hash(id) & 0xffu, mgmt ? 1 : 0,
                     host_number & 0xff);
}

std::string guest_tap(std::string_view id, bool mgmt) {
  return ifname(id, mgmt ? "tmgmt" : "tnic");
}

std::string guest_bridge(std::string_view id, bool mgmt) {
  return ifname(id, mgmt ? "bmgmt" : "bnic");
}

std::string guest_tap_batch(const Namespace& ns, const TestbedOptions& o) {
  std::string out;
  for (const bool mgmt : {false, true}) {
    const Interface* veth = interface_of(ns, mgmt ? LinkKind::mgmt : LinkKind::host);
    if (veth == nullptr) continue;
    // On a lossless fabric the guest's fabric NIC is a process (guest_nic.hpp), not a tap.
    if (!mgmt && o.lossless) continue;
    const std::string tap = guest_tap(o.id, mgmt);
    const std::string bridge = guest_bridge(o.id, mgmt);
    out += fmt::format("tuntap add dev {} mode tap\n", tap);
    out += fmt::format("link add name {} type bridge\n", bridge);
    // One MTU on tap, bridge and veth: rxe sets DF, so a smaller hop drops its packets.
    if (!mgmt) {
      out += fmt::format("link set dev {} mtu {}\n", tap, o.mtu);
      out += fmt::format("link set dev {} mtu {}\n", bridge, o.mtu);
    }
    out += fmt::format("link set dev {} master {}\n", veth->name, bridge);
    out += fmt::format("link set dev {} master {}\n", tap, bridge);
    out += fmt::format("link set dev {} up\n", tap);
    out += fmt::format("link set dev {} up\n", bridge);
  }
  return out;
}

std::string guest_init_script() {
  return R"sh(#!/bin/busybox sh
# Written by 'rocehil testbed up --vm': the initramfs of a testbed guest. It mounts the machine's
# root file system (9p, read-only) under an in-memory overlay and hands over to stage 2 there.
/bin/busybox --install -s /bin
say() { echo "rocehil-guest: $*"; }
stop() { say "failed: $*"; exec sleep 2147483647; }
mkdir -p /proc /sys /dev /lower /rw /newroot
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
for m in /modules/*.ko; do
  insmod "$m" || stop "insmod ${m##*/}"
done
# msize: the 9p message size; the default 8 KiB makes every binary load crawl.
mount -t 9p -o trans=virtio,version=9p2000.L,ro,msize=262144 hostroot /lower ||
  stop "mounting the machine's root file system over 9p"
mount -t tmpfs -o mode=0755 tmpfs /rw
mkdir -p /rw/upper /rw/work
mount -t overlay overlay -o lowerdir=/lower,upperdir=/rw/upper,workdir=/rw/work /newroot ||
  stop "the overlay over the machine's root file system"
for d in proc sys dev; do mount --move /$d /newroot/$d; done
settings=$(sed -n 's/.*rocehil_guest=\([^ ]*\).*/\1/p' /newroot/proc/cmdline)
stage2=$(sed -n 's/.*rocehil_stage2=\([^ ]*\).*/\1/p' /newroot/proc/cmdline)
[ -r "/newroot$stage2" ] || stop "no stage 2 script at $stage2"
exec switch_root /newroot /bin/bash "$stage2" "$settings"
)sh";
}

std::string guest_stage2_script() {
  return R"sh(#!/bin/bash
# Written by 'rocehil testbed up --vm': stage 2 of a testbed guest, PID 1 on the machine's own
# files (read-only, writes kept in memory). It names and addresses the NICs, makes the soft-RoCE
# device, starts sshd and then only reaps: if it exited, the kernel would panic.
say() { echo "rocehil-guest: $*"; }
stop() {
  say "failed: $*"
  while :; do sleep 3600 & wait $!; done
}
# shellcheck disable=SC1090
. "$1" || stop "cannot read the settings file $1"

mount -t tmpfs -o mode=0755 tmpfs /run
mkdir -p /run/sshd /dev/pts /dev/shm
mount -t devpts devpts /dev/pts
# rocehil's build tree (or its binary's directory) straight from the machine, outside the overlay:
# a rebuild while the guest runs is seen whole, never through pages of the file it replaced.
if [ -n "$LIVE_DIR" ]; then
  mount -t 9p -o trans=virtio,version=9p2000.L,ro,msize=262144 live "$LIVE_DIR" ||
    stop "mounting $LIVE_DIR over 9p"
fi
mount -t tmpfs tmpfs /dev/shm
# The machine's /usr/lib/modules has its own kernel's modules; the guest's come from the cache.
mkdir -p "/usr/lib/modules/$KERNEL"
mount --bind "$MODULES" "/usr/lib/modules/$KERNEL" || stop "bind-mounting $MODULES"
hostname "$HOST"
# root's own home, as on a real host: the machine's dotfiles (a .bashrc that starts pyenv, say)
# would run, under emulation, in every ssh command.
mount -t tmpfs -o mode=0700 tmpfs /root
sysctl -q -w net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1

# QEMU's PCI order is not ours: the NICs are found by the MAC addresses up gave them.
for netdev in /sys/class/net/*; do
  case "$(cat "$netdev/address")" in
    "$FABRIC_MAC") fabric=${netdev##*/} ;;
    "$MGMT_MAC") mgmt=${netdev##*/} ;;
  esac
done
[ -n "${fabric:-}" ] && [ -n "${mgmt:-}" ] || stop "no NIC with MAC $FABRIC_MAC and $MGMT_MAC"
ip link set dev "$fabric" name "$FABRIC_NETDEV.new" && ip link set dev "$mgmt" name "$MGMT_NETDEV" &&
  ip link set dev "$FABRIC_NETDEV.new" name "$FABRIC_NETDEV" || stop "renaming the NICs"
ip link set dev lo up
ip link set dev "$FABRIC_NETDEV" mtu "$MTU" up || stop "MTU $MTU on $FABRIC_NETDEV"
# A /32 with a route to the gateway, not "peer GATEWAY": rxe takes its IPv4 GID from the
# address's ifa_address, which for a point-to-point address is the peer's.
ip addr add "$FABRIC_ADDRESS/32" dev "$FABRIC_NETDEV" &&
  ip route add "$GATEWAY/32" dev "$FABRIC_NETDEV" scope link &&
  ip route add "$FABRIC_PREFIX" via "$GATEWAY" dev "$FABRIC_NETDEV" ||
  stop "addressing $FABRIC_NETDEV"
ip link set dev "$MGMT_NETDEV" up && ip addr add "$MGMT_ADDRESS" dev "$MGMT_NETDEV" ||
  stop "addressing $MGMT_NETDEV"

# No udev here: the uverbs device node appears by itself, rdma_cm's only with rdma_ucm.
modprobe rdma_rxe && modprobe rdma_ucm || stop "modprobe rdma_rxe rdma_ucm"
rdma link add "$RDMA_DEVICE" type rxe netdev "$FABRIC_NETDEV" ||
  stop "rdma link add $RDMA_DEVICE type rxe netdev $FABRIC_NETDEV"
gid=/sys/class/infiniband/$RDMA_DEVICE/ports/1/gids/$GID_INDEX
for _ in $(seq 1 100); do
  case "$(cat "$gid" 2>/dev/null)" in 0000:0000:0000:0000:0000:ffff:*) break ;; esac
  sleep 0.1
done
case "$(cat "$gid" 2>/dev/null)" in
  "$FABRIC_GID") ;;
  *) stop "GID $GID_INDEX of $RDMA_DEVICE is $(cat "$gid" 2>/dev/null), not $FABRIC_ADDRESS's" ;;
esac

/usr/sbin/sshd -f "$SSHD_CONFIG" -E "$SSHD_LOG" || stop "sshd -f $SSHD_CONFIG"
say "ready $HOST $RDMA_DEVICE on $FABRIC_NETDEV $FABRIC_ADDRESS kernel $(uname -r)"
while :; do sleep 3600 & wait $!; done
)sh";
}

std::string guest_settings(const Namespace& ns, const Topology& t, const TestbedOptions& o,
                           const TestbedPaths& paths, const GuestKernel& kernel,
                           const std::string& live_dir) {
  const Interface* nic = interface_of(ns, LinkKind::host);
  const Interface* mgmt = interface_of(ns, LinkKind::mgmt);
  const int number = host_number(ns);
  std::string out =
      fmt::format("# Written by 'rocehil testbed up --vm': the guest of {}.\n", ns.netns);
  const auto put = [&out](std::string_view key, std::string_view value) {
    out += fmt::format("{}={}\n", key, single_quoted(value));
  };
  put("HOST", ns.name);
  put("KERNEL", kernel.version);
  put("MODULES", kernel.modules_dir);
  put("MTU", std::to_string(o.mtu));
  put("FABRIC_NETDEV", guest_fabric_netdev);
  put("FABRIC_MAC", guest_mac(o.id, number, false));
  put("FABRIC_ADDRESS", nic ? nic->address : "");
  put("FABRIC_GID", nic ? ipv4_mapped_gid(nic->address) : "");
  put("GATEWAY", nic ? nic->peer_address : "");
  put("FABRIC_PREFIX", t.fabric_prefix);
  put("MGMT_NETDEV", guest_mgmt_netdev);
  put("MGMT_MAC", guest_mac(o.id, number, true));
  put("MGMT_ADDRESS", mgmt ? fmt::format("{}/{}", mgmt->address, mgmt->prefix_length) : "");
  put("RDMA_DEVICE", guest_rdma_device);
  put("GID_INDEX", std::to_string(guest_gid_index));
  put("SSHD_CONFIG", paths.sshd_config(ns));
  put("SSHD_LOG", paths.sshd_log(ns));
  put("LIVE_DIR", live_dir);
  return out;
}

std::string guest_live_directory(const std::string& agent,
                                 const std::function<bool(const std::string&)>& is_file) {
  const std::size_t slash = agent.rfind('/');
  if (agent.empty() || slash == std::string::npos || slash == 0) return {};
  std::string dir = agent.substr(0, slash);
  std::string up = dir;
  for (int level = 0; level < 3 && up.size() > 1; ++level) {
    if (is_file(up + "/CMakeCache.txt")) return up;
    up = up.substr(0, std::max<std::size_t>(up.rfind('/'), 1));
  }
  return dir;
}

GuestAccel choose_accel(GuestAccel requested, bool kvm_device, std::string_view cpu_flags) {
  if (requested != GuestAccel::automatic) return requested;
  const auto has_flag = [cpu_flags](std::string_view flag) {
    for (std::size_t at = cpu_flags.find(flag); at != std::string_view::npos;
         at = cpu_flags.find(flag, at + 1)) {
      const bool starts = at == 0 || cpu_flags[at - 1] == ' ' || cpu_flags[at - 1] == '\t';
      const std::size_t end = at + flag.size();
      const bool ends = end == cpu_flags.size() || cpu_flags[end] == ' ' ||
                        cpu_flags[end] == '\n' || cpu_flags[end] == '\t';
      if (starts && ends) return true;
    }
    return false;
  };
  return kvm_device && (has_flag("vmx") || has_flag("svm")) ? GuestAccel::kvm : GuestAccel::tcg;
}

namespace {
// QEMU reads a comma in an option's value as doubled.
std::string qemu_option_value(std::string_view text) {
  std::string out;
  for (const char c : text) {
    out += c;
    if (c == ',') out += ',';
  }
  return out;
}
}  // namespace

std::vector<std::string> qemu_argv(const Namespace& ns, const Topology& t, const TestbedOptions& o,
                                   const TestbedPaths& paths, const GuestKernel& kernel,
                                   GuestAccel accel, const std::string& live_dir) {
  const int number = host_number(ns);
  std::vector<std::string> argv = {"qemu-system-x86_64",
                                   // The name puts the testbed's id on its command line, where
                                   // `down` finds a guest whose namespace is already gone.
                                   "-name", ns.netns, "-nodefaults", "-no-user-config", "-display",
                                   "none", "-no-reboot"};
  if (accel == GuestAccel::kvm) {
    // Plain `-cpu host` aborts on MSR 0x10a (arch-capabilities) on some hosts.
    argv.insert(argv.end(), {"-accel", "kvm", "-cpu", "host,-arch-capabilities"});
  } else {
    // A 128 MiB translation cache: QEMU's default (a quarter of the guest's memory, up to 1 GiB)
    // more than doubles each guest's resident memory for no speed a guest this busy notices.
    argv.insert(argv.end(), {"-accel", "tcg,tb-size=128", "-cpu", "max"});
  }
  argv.insert(argv.end(), {"-smp", "1", "-m", std::to_string(o.vm.memory_mb)});
  argv.insert(argv.end(), {"-serial", "file:" + paths.guest_console(ns)});
  argv.insert(argv.end(), {"-kernel", kernel.vmlinuz, "-initrd", paths.initramfs()});
  // panic=1 with -no-reboot: a guest that panics ends its QEMU, which status and up see.
  argv.insert(argv.end(), {"-append", fmt::format("console=ttyS0 quiet panic=1 rocehil_stage2={} "
                                                  "rocehil_guest={}",
                                                  paths.guest_stage2(), paths.guest_settings(ns))});
  // This machine's / read-only; multidevs=remap because it spans several file systems, whose
  // inode numbers would otherwise collide in the guest.
  argv.insert(argv.end(),
              {"-fsdev", "local,id=hostroot,path=/,security_model=none,readonly=on,multidevs=remap",
               "-device", "virtio-9p-pci,fsdev=hostroot,mount_tag=hostroot"});
  // A virtio 9p device serves one mount: the live directory has its own.
  if (!live_dir.empty())
    argv.insert(
        argv.end(),
        {"-fsdev",
         fmt::format("local,id=live,path={},security_model=none,readonly=on,multidevs=remap",
                     qemu_option_value(live_dir)),
         "-device", "virtio-9p-pci,fsdev=live,mount_tag=live"});
  // On a lossless fabric the fabric NIC is QEMU's stream to the guest NIC process, which stops
  // reading while PFC holds its queues: QEMU then stops taking from the virtio ring (a tap takes
  // every frame, whatever the wire does).
  const std::string fabric_netdev =
      o.lossless
          ? fmt::format("stream,id=nic,server=off,addr.type=unix,addr.path={}",
                        qemu_option_value(TestbedPaths::guest_nic_socket(ns)))
          : fmt::format("tap,id=nic,ifname={},script=no,downscript=no", guest_tap(t.id, false));
  argv.insert(
      argv.end(),
      {"-netdev", fabric_netdev, "-device",
       fmt::format("virtio-net-pci,netdev=nic,mac={},host_mtu={}", guest_mac(t.id, number, false),
                   o.mtu),
       "-netdev",
       fmt::format("tap,id=mgmt,ifname={},script=no,downscript=no", guest_tap(t.id, true)),
       "-device", fmt::format("virtio-net-pci,netdev=mgmt,mac={}", guest_mac(t.id, number, true))});
  argv.insert(argv.end(), {"-daemonize", "-pidfile", paths.qemu_pid(ns)});
  return argv;
}

}  // namespace rocehil::testbed
