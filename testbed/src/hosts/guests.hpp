#pragma once

#include <chrono>

#include "rocehil/testbed/guest_files.hpp"
#include "rocehil/testbed/options.hpp"
#include "rocehil/testbed/paths.hpp"
#include "rocehil/testbed/testbed.hpp"
#include "rocehil/testbed/topology.hpp"

namespace rocehil::testbed {

// Hosts as QEMU guests (--vm; what they boot with is in guest_files.hpp).

// Checks what the guests need (QEMU, the cached kernel, a static busybox) and writes the
// initramfs and stage-2 script. Throws rocehil::Error (bad input, exit 2) with one line naming
// what is missing and how to install it. Returns the kernel found.
GuestKernel prepare_guests(const TestbedOptions& options, const TestbedPaths& paths);

// In each host namespace (its veths made): taps bridged to them, the guest's settings file and
// QEMU, daemonized. Returns at once; the guests boot while the rest of the fabric is built.
void start_guests(const Topology& t, const TestbedOptions& options, const TestbedPaths& paths,
                  const GuestKernel& kernel, const StepReporter& report);

// Waits until every guest's console says it is ready. Throws rocehil::Error (infrastructure)
// naming the first guest whose console says it failed, whose QEMU ended, or that is not ready
// by `limit`, with the console's last lines and its file.
void wait_for_guests(const Topology& t, const TestbedPaths& paths, std::chrono::seconds limit,
                     const StepReporter& report);

GuestStatus guest_status(const Namespace& ns, const TestbedPaths& paths);

// The last "rocehil-guest: ..." line of a console's text, without the prefix; empty without one.
std::string last_guest_line(std::string_view console);

}  // namespace rocehil::testbed
