#include "rocehil/testbed/guest_files.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <unistd.h>
#include "has_line.hpp"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>

#include "hosts/guest_kernel.hpp"
#include "hosts/guests.hpp"
#include "rocehil/common/error.hpp"
#include "rocehil/testbed/scripts.hpp"

namespace rocehil::testbed {
namespace {

namespace fs = std::filesystem;

struct GuestFabric {
  TestbedOptions o;
  Topology t;
  TestbedPaths paths{"/tmp/tb"};
  GuestKernel kernel{"6.1.0-56-amd64", "/cache/6.1.0-56-amd64/boot/vmlinuz-6.1.0-56-amd64",
                     "/cache/6.1.0-56-amd64/lib/modules/6.1.0-56-amd64"};
  GuestFabric() {
    o.dir = "/tmp/tb";
    o.id = "t1";
    o.vm.enabled = true;
    t = build_topology(o, 8);
  }
  const Namespace& ns(std::string_view name) const { return *t.find(name); }
};

using testing::has_line;

// The shell's own parser on the text: a script that does not parse never boots a guest.
bool parses(const std::string& shell, const std::string& text) {
  const fs::path file = fs::temp_directory_path() / fmt::format("guest-script-{}.sh", getpid());
  std::ofstream(file) << text;
  const int status = std::system(fmt::format("{} -n {} 2>/dev/null", shell, file.string()).c_str());
  fs::remove(file);
  return status == 0;
}

TEST(GuestFiles, MacsDifferPerHostAndNicAndAreLocallyAdministered) {
  std::set<std::string> macs;
  for (int host = 1; host <= 256; ++host)
    for (bool mgmt : {false, true}) macs.insert(guest_mac("t1", host, mgmt));
  EXPECT_EQ(macs.size(), 512u);
  EXPECT_EQ(guest_mac("t1", 3, false).substr(0, 9), "52:54:00:");
  EXPECT_NE(guest_mac("t1", 3, false), guest_mac("t2", 3, false));
}

TEST(GuestFiles, TheHostNamespaceBridgesItsVethsToTheTaps) {
  GuestFabric f;
  const std::string batch = guest_tap_batch(f.ns("h1"), f.o);
  EXPECT_TRUE(has_line(batch, "tuntap add dev t1-tnic mode tap"));
  EXPECT_TRUE(has_line(batch, "link set dev t1-nic0 master t1-bnic"));
  EXPECT_TRUE(has_line(batch, "link set dev t1-tnic master t1-bnic"));
  EXPECT_TRUE(has_line(batch, "link set dev t1-mgmt master t1-bmgmt"));
  EXPECT_TRUE(has_line(batch, "link set dev t1-tnic mtu 9000"));
  EXPECT_TRUE(has_line(batch, "link set dev t1-bnic up"));
}

TEST(GuestFiles, AGuestsNamespaceHasNoAddressesOrRoutes) {
  GuestFabric f;
  const std::string guest = namespace_ip_batch(f.ns("h1"), f.o);
  EXPECT_EQ(guest.find("addr add"), std::string::npos) << guest;
  EXPECT_EQ(guest.find("route add"), std::string::npos) << guest;
  // The leaf keeps its end, and a namespace host keeps its address.
  EXPECT_NE(namespace_ip_batch(f.ns("l1"), f.o).find("addr add 198.18.1.1 peer 198.18.1.11"),
            std::string::npos);
  f.o.vm.enabled = false;
  EXPECT_NE(namespace_ip_batch(f.ns("h1"), f.o).find("addr add 198.18.1.11 peer 198.18.1.1"),
            std::string::npos);
}

TEST(GuestFiles, SettingsCarryTheHostsAddressesAndItsGid) {
  GuestFabric f;
  const std::string s = guest_settings(f.ns("h3"), f.t, f.o, f.paths, f.kernel, "/src/build");
  EXPECT_TRUE(has_line(s, "HOST='h3'"));
  EXPECT_TRUE(has_line(s, "FABRIC_ADDRESS='198.18.2.11'"));
  EXPECT_TRUE(has_line(s, "GATEWAY='198.18.2.1'"));
  EXPECT_TRUE(has_line(s, "FABRIC_GID='0000:0000:0000:0000:0000:ffff:c612:020b'"));
  EXPECT_TRUE(has_line(s, "FABRIC_PREFIX='198.18.0.0/16'"));
  EXPECT_TRUE(has_line(s, "MGMT_ADDRESS='198.19.8.13/23'"));
  EXPECT_TRUE(has_line(s, fmt::format("FABRIC_MAC='{}'", guest_mac("t1", 3, false))));
  EXPECT_TRUE(has_line(s, "MODULES='/cache/6.1.0-56-amd64/lib/modules/6.1.0-56-amd64'"));
  EXPECT_TRUE(has_line(s, "SSHD_CONFIG='/tmp/tb/ssh/rocehil-t1-h3.sshd_config'"));
  EXPECT_TRUE(has_line(s, "LIVE_DIR='/src/build'"));
}

// The build tree comes live (the hw tests beside rocehil too); an installed binary's directory
// alone; never the whole root.
TEST(GuestFiles, TheLiveDirectoryIsTheAgentsBuildTree) {
  const auto cmake_at = [](std::string tree) {
    return [tree](const std::string& path) { return path == tree + "/CMakeCache.txt"; };
  };
  EXPECT_EQ(guest_live_directory("/src/build/harness/rocehil", cmake_at("/src/build")),
            "/src/build");
  EXPECT_EQ(guest_live_directory("/src/build/rocehil", cmake_at("/src/build")), "/src/build");
  EXPECT_EQ(guest_live_directory("/usr/bin/rocehil", cmake_at("/src/build")), "/usr/bin");
  EXPECT_EQ(guest_live_directory("/a/b/c/d/rocehil", cmake_at("/a")), "/a/b/c/d");  // too far
  EXPECT_EQ(guest_live_directory("/rocehil", cmake_at("")), "");
  EXPECT_EQ(guest_live_directory("", cmake_at("")), "");
}

TEST(GuestFiles, Ipv4MappedGidIsSysfsText) {
  EXPECT_EQ(ipv4_mapped_gid("198.18.1.11"), "0000:0000:0000:0000:0000:ffff:c612:010b");
  EXPECT_EQ(ipv4_mapped_gid("10.0.0.255"), "0000:0000:0000:0000:0000:ffff:0a00:00ff");
  EXPECT_EQ(ipv4_mapped_gid("198.18.1"), "");
  EXPECT_EQ(ipv4_mapped_gid("198.18.1.300"), "");
  EXPECT_EQ(ipv4_mapped_gid("198.18.1.11x"), "");
  EXPECT_EQ(ipv4_mapped_gid("198.18.1."), "");
  EXPECT_EQ(ipv4_mapped_gid(""), "");
}

TEST(GuestFiles, ScriptsParse) {
  EXPECT_TRUE(parses("bash", guest_stage2_script()));
  EXPECT_FALSE(parses("bash", guest_stage2_script() + "\nif then\n"));  // the check can fail
  // The initramfs runs busybox's sh; dash parses the same POSIX syntax.
  EXPECT_TRUE(parses("sh", guest_init_script()));
  EXPECT_TRUE(guest_init_script().starts_with("#!/bin/busybox sh\n"));
}

TEST(GuestFiles, AccelIsKvmOnlyWithTheDeviceAndTheCpuFlag) {
  const std::string vmx = "flags\t\t: fpu vme de vmx sse2\n";
  const std::string none = "flags\t\t: fpu vme de sse2 vmxnot\n";
  EXPECT_EQ(choose_accel(GuestAccel::automatic, true, vmx), GuestAccel::kvm);
  EXPECT_EQ(choose_accel(GuestAccel::automatic, true, "flags : svm"), GuestAccel::kvm);
  EXPECT_EQ(choose_accel(GuestAccel::automatic, false, vmx), GuestAccel::tcg);
  // /dev/kvm behind a software hypervisor: no vmx or svm, so full emulation.
  EXPECT_EQ(choose_accel(GuestAccel::automatic, true, none), GuestAccel::tcg);
  EXPECT_EQ(choose_accel(GuestAccel::kvm, false, none), GuestAccel::kvm);
  EXPECT_EQ(choose_accel(GuestAccel::tcg, true, vmx), GuestAccel::tcg);
}

TEST(GuestFiles, QemuArgvBootsTheCachedKernelWithBothNics) {
  GuestFabric f;
  const auto argv = qemu_argv(f.ns("h2"), f.t, f.o, f.paths, f.kernel, GuestAccel::tcg, "/src/b,1");
  const auto after = [&argv](std::string_view flag) {
    const auto it = std::find(argv.begin(), argv.end(), flag);
    return it == argv.end() || it + 1 == argv.end() ? std::string() : *(it + 1);
  };
  EXPECT_EQ(argv.front(), "qemu-system-x86_64");
  EXPECT_EQ(after("-name"), "rocehil-t1-h2");
  EXPECT_EQ(after("-accel"), "tcg,tb-size=128");
  EXPECT_EQ(after("-m"), "512");
  EXPECT_EQ(after("-kernel"), f.kernel.vmlinuz);
  EXPECT_EQ(after("-initrd"), "/tmp/tb/vm/initrd.img");
  EXPECT_EQ(after("-pidfile"), "/tmp/tb/run/rocehil-t1-h2.qemu.pid");
  EXPECT_NE(after("-append").find("rocehil_guest=/tmp/tb/vm/rocehil-t1-h2.conf"),
            std::string::npos);
  EXPECT_EQ(std::count(argv.begin(), argv.end(), "-netdev"), 2);
  EXPECT_NE(std::find(argv.begin(), argv.end(),
                      fmt::format("virtio-net-pci,netdev=nic,mac={},host_mtu=9000",
                                  guest_mac("t1", 2, false))),
            argv.end());
  const auto kvm = qemu_argv(f.ns("h2"), f.t, f.o, f.paths, f.kernel, GuestAccel::kvm, "");
  EXPECT_NE(std::find(kvm.begin(), kvm.end(), "host,-arch-capabilities"), kvm.end());
  // The live directory on a 9p device of its own (one mount per device), its comma doubled.
  EXPECT_NE(std::find(argv.begin(), argv.end(),
                      "local,id=live,path=/src/b,,1,security_model=none,readonly=on,"
                      "multidevs=remap"),
            argv.end());
  EXPECT_EQ(std::count(argv.begin(), argv.end(), "-fsdev"), 2);
  EXPECT_EQ(std::count(kvm.begin(), kvm.end(), "-fsdev"), 1);  // none asked, none made
}

TEST(GuestFiles, LastGuestLineIsWhatTheConsoleSaidLast) {
  EXPECT_EQ(last_guest_line(""), "");
  EXPECT_EQ(last_guest_line("[    1.0] virtio\nrocehil-guest: failed: insmod 9p.ko\r\n"),
            "failed: insmod 9p.ko");
  EXPECT_EQ(last_guest_line("rocehil-guest: failed: x\nrocehil-guest: ready h1 rxe0"),
            "ready h1 rxe0");
}

TEST(GuestKernel, TheNewestCompleteVersionIsChosen) {
  const fs::path cache = fs::temp_directory_path() / fmt::format("guest-kernel-{}", getpid());
  fs::remove_all(cache);
  EXPECT_THROW(find_guest_kernel(cache.string()), Error);
  const auto add = [&cache](const std::string& v, bool complete) {
    fs::create_directories(cache / v / "boot");
    fs::create_directories(cache / v / "lib/modules" / v);
    std::ofstream(cache / v / "boot" / ("vmlinuz-" + v)) << "kernel";
    std::ofstream(cache / v / "lib/modules" / v / "modules.dep") << "";
    if (complete) std::ofstream(cache / v / ".complete") << "";
  };
  add("6.1.0-9-amd64", true);
  add("6.1.0-56-amd64", true);
  add("6.1.0-60-amd64", false);  // an unpacking that was cut short
  const GuestKernel k = find_guest_kernel(cache.string());
  EXPECT_EQ(k.version, "6.1.0-56-amd64");
  EXPECT_EQ(k.vmlinuz, (cache / "6.1.0-56-amd64/boot/vmlinuz-6.1.0-56-amd64").string());
  EXPECT_EQ(k.modules_dir, (cache / "6.1.0-56-amd64/lib/modules/6.1.0-56-amd64").string());
  fs::remove_all(cache);
}

TEST(GuestKernel, ADynamicBusyboxIsTold) {
  EXPECT_TRUE(elf_needs_interpreter("/proc/self/exe"));  // this test binary is dynamic
  const fs::path text = fs::temp_directory_path() / fmt::format("not-elf-{}", getpid());
  std::ofstream(text) << "#!/bin/sh\n";
  EXPECT_FALSE(elf_needs_interpreter(text.string()));
  fs::remove(text);
  if (fs::exists("/usr/bin/busybox") && fs::exists("/usr/share/doc/busybox-static")) {
    EXPECT_FALSE(elf_needs_interpreter("/usr/bin/busybox"));
  }
}

}  // namespace
}  // namespace rocehil::testbed
