#include "guest_nic/guest_nics.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <thread>

#include "rocehil/common/error.hpp"
#include "rocehil/testbed/shared_counters.hpp"
#include "tools/files.hpp"
#include "tools/process.hpp"

namespace rocehil::testbed::guest_nic {

namespace {

namespace fs = std::filesystem;

const Interface* fabric_port(const Namespace& ns) {
  for (const auto& i : ns.interfaces)
    if (i.kind == LinkKind::host) return &i;
  return nullptr;
}

void write_config(const Namespace& ns, const TestbedOptions& options, const TestbedPaths& paths) {
  write_file(paths.guest_nic_config(ns),
             to_json_text(nic_config(ns, options, dataplane::shared_counters_path(ns.netns))),
             fs::perms::owner_read | fs::perms::owner_write);
}

std::vector<const Namespace*> guest_hosts(const Topology& t) {
  std::vector<const Namespace*> out;
  for (const auto& ns : t.namespaces)
    if (ns.role == Role::host && fabric_port(ns) != nullptr) out.push_back(&ns);
  return out;
}

}  // namespace

NicConfig nic_config(const Namespace& ns, const TestbedOptions& options,
                     const std::string& counters_path) {
  NicConfig c;
  c.name = ns.name;
  const Interface* port = fabric_port(ns);
  if (port == nullptr)
    throw Error(ExitCode::infrastructure, fmt::format("host {} has no fabric port", ns.name));
  c.port = port->name;
  c.mbps = port->mbps;
  c.socket_path = TestbedPaths::guest_nic_socket(ns);
  c.counters_path = counters_path;
  c.pfc_priorities = options.knobs.pfc_priorities;
  // Both buffers in time of the port, as a NIC's are sized for its speed: every byte they hold
  // is latency an ACK waits behind (rxe times out after 67 ms, 420 KB at 50 Mbit/s). 2 ms, and
  // never under a few jumbo frames.
  const double bytes_per_ms = (c.mbps > 0 ? c.mbps : 100'000) * 1e6 / 8 / 1000;
  c.transmit_buffer_bytes = static_cast<std::uint32_t>(std::max(16.0 * 1024, 2 * bytes_per_ms));
  c.receive_xoff_bytes = static_cast<std::uint32_t>(std::max(64.0 * 1024, 2 * bytes_per_ms));
  c.receive_xon_bytes = c.receive_xoff_bytes / 2;
  c.receive_buffer_bytes = std::max<std::uint32_t>(4u << 20, c.receive_xoff_bytes * 4);
  return c;
}

void start_guest_nics(const Topology& t, const TestbedOptions& options, const TestbedPaths& paths,
                      const std::string& rocehil, const StepReporter& report) {
  const auto hosts = guest_hosts(t);
  report(fmt::format(
      "guest NICs: {} processes between QEMU and the fabric; PFC obeyed on priorities [{}]",
      hosts.size(), fmt::join(options.knobs.pfc_priorities, ",")));
  fs::create_directories(paths.vm_dir());
  fs::create_directories(TestbedPaths::public_run_dir());
  for (const Namespace* ns : hosts) {
    fs::create_directories(fs::path(dataplane::shared_counters_path(ns->netns)).parent_path());
    fs::remove(dataplane::shared_counters_path(ns->netns));
    fs::remove(TestbedPaths::guest_nic_socket(*ns));
    // The veth is the guest's wire now, not an interface of this namespace: the kernel's own
    // IPv6 (router solicitations, MLD) would go onto it as if the guest had sent them.
    run_checked(fmt::format("turning IPv6 off on {}'s fabric port", ns->netns),
                {"ip", "netns", "exec", ns->netns, "sysctl", "-q", "-w",
                 fmt::format("net.ipv6.conf.{}.disable_ipv6=1", fabric_port(*ns)->name)});
    write_config(*ns, options, paths);
    run_checked(fmt::format("starting the guest NIC of {}", ns->netns),
                {rocehil, "testbed", "guest-nic", "--netns", ns->netns, "--config",
                 paths.guest_nic_config(*ns), "--pid-file", paths.guest_nic_pid(*ns), "--log",
                 paths.guest_nic_log(*ns)});
  }
  // Each listens, and makes its counters file, before its QEMU connects.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  for (const Namespace* ns : hosts) {
    while (!fs::exists(TestbedPaths::guest_nic_socket(*ns))) {
      const bool alive = running_pid(paths.guest_nic_pid(*ns), {"guest-nic", ns->netns}) != 0;
      if (!alive || std::chrono::steady_clock::now() > deadline)
        throw Error(ExitCode::infrastructure,
                    fmt::format("the guest NIC of {} {}; its log is {}", ns->netns,
                                alive ? "does not listen for QEMU after 10 s"
                                      : "stopped before listening for QEMU",
                                paths.guest_nic_log(*ns)));
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
}

void reload_guest_nics(const Topology& t, const TestbedOptions& options,
                       const TestbedPaths& paths) {
  for (const Namespace* ns : guest_hosts(t)) {
    write_config(*ns, options, paths);
    const int pid = running_pid(paths.guest_nic_pid(*ns), {"guest-nic", ns->netns});
    if (pid == 0 || ::kill(pid, SIGHUP) != 0)
      throw Error(ExitCode::infrastructure,
                  fmt::format("the guest NIC of {} is not running; its log is {}; bring the "
                              "testbed down and up again",
                              ns->netns, paths.guest_nic_log(*ns)));
  }
}

}  // namespace rocehil::testbed::guest_nic
