#pragma once

#include <string>

#include "rocehil/testbed/guest_files.hpp"
#include "rocehil/testbed/paths.hpp"

namespace rocehil::testbed {

// The distro kernel the guests boot, as scripts/guest-kernel.sh leaves it in `cache`: the newest
// VERSION directory holding its .complete marker. Throws rocehil::Error (bad input, exit 2)
// saying how to fetch it when there is none.
GuestKernel find_guest_kernel(const std::string& cache);

// Writes paths.initramfs(): a static busybox, the modules /init needs to reach the machine's
// root file system (in modprobe's dependency order) and guest_init_script(). Throws
// rocehil::Error naming what is missing (busybox-static, kmod's modprobe, cpio).
void build_initramfs(const GuestKernel& kernel, const TestbedPaths& paths);

// Whether the ELF file at `path` asks for a program interpreter (a dynamic loader): a busybox
// that does cannot run in an initramfs without its libraries. False for a file that is not ELF.
bool elf_needs_interpreter(const std::string& path);

}  // namespace rocehil::testbed
