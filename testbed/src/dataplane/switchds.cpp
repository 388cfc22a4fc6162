#include "dataplane/switchds.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include "rocehil/common/error.hpp"
#include "rocehil/testbed/shared_counters.hpp"
#include "tools/files.hpp"
#include "tools/process.hpp"
#include "tools/receive_steering.hpp"

namespace rocehil::testbed::dataplane {

namespace {

namespace fs = std::filesystem;

std::string counters_path(const Namespace& ns) {
  return shared_counters_path(ns.netns);
}

void write_config(const Namespace& ns, int ordinal, const TestbedOptions& options,
                  const TestbedPaths& paths) {
  SwitchConfig config = switch_config(ns, options, counters_path(ns));
  // The switches spread over the CPUs, each kept to one (switch_config.hpp says why).
  const long cpus = ::sysconf(_SC_NPROCESSORS_ONLN);
  config.cpu = cpus > 0 ? static_cast<int>(ordinal % cpus) : -1;
  write_file(paths.switchd_config(ns), to_json_text(config),
             fs::perms::owner_read | fs::perms::owner_write);
}

// What arrives on a switch port is spread over the CPUs by flow (receive_steering.hpp): a host's
// sender (its tbf's dequeue, on whichever CPU runs it) moves between CPUs, and without it the
// receiver's go-back-N resent windows with nothing lost (358 and 377 retransmits in incasts with
// 0 drops counted anywhere). (Steering each switch's ports to its process's CPU keeps order too;
// both runs tried that way had lossless drops, then with a 10 ms headroom.)
void steer_ports_by_flow(const Namespace& ns) {
  std::vector<std::string> ports;
  for (const auto& i : ns.interfaces)
    if (is_fabric(i)) ports.push_back(i.name);
  steer_by_flow(ns.netns, ports);
}

}  // namespace

SwitchConfig switch_config(const Namespace& ns, const TestbedOptions& options,
                           const std::string& counters) {
  SwitchConfig c;
  c.name = ns.name;
  c.ecmp_seed = options.ecmp_seed;
  c.knobs = options.knobs;
  c.counters_path = counters;
  for (const auto& i : ns.interfaces)
    if (is_fabric(i)) c.ports.push_back({i.name, i.mbps});
  return c;
}

void start_switchds(const Topology& t, const TestbedOptions& options, const TestbedPaths& paths,
                    const std::string& rocehil, const StepReporter& report) {
  std::vector<const Namespace*> switches;
  for (const auto& ns : t.namespaces)
    if (is_switch(ns)) switches.push_back(&ns);
  const SwitchKnobs& k = options.knobs;
  report(fmt::format(
      "lossless switches: {} forwarding processes; PFC on priorities [{}], ECN {} (WRED {}-{} KB, "
      "{}%), XOFF {} KB, watchdog {} ms",
      switches.size(), fmt::join(k.pfc_priorities, ","), k.ecn_enable ? "on" : "off",
      k.wred_kmin_kb, k.wred_kmax_kb, k.wred_pmax_percent, k.xoff_kb, k.watchdog_detection_ms));
  fs::create_directories(paths.switchd_dir());
  int ordinal = 0;
  for (const Namespace* ns : switches) {
    fs::create_directories(fs::path(counters_path(*ns)).parent_path());
    fs::remove(counters_path(*ns));
    steer_ports_by_flow(*ns);
    write_config(*ns, ordinal++, options, paths);
    run_checked(
        fmt::format("starting the forwarding process of {}", ns->netns),
        {rocehil, "testbed", "switchd", "--netns", ns->netns, "--config", paths.switchd_config(*ns),
         "--pid-file", paths.switchd_pid(*ns), "--log", paths.switchd_log(*ns)});
  }
  // Each makes its counters file once its ports are open.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  for (const Namespace* ns : switches) {
    while (!fs::exists(counters_path(*ns))) {
      const bool alive = running_pid(paths.switchd_pid(*ns), {"switchd", ns->netns}) != 0;
      if (!alive || std::chrono::steady_clock::now() > deadline)
        throw Error(
            ExitCode::infrastructure,
            fmt::format("the forwarding process of {} {} its ports; its log is {}", ns->netns,
                        alive ? "has not opened, after 10 s," : "stopped before opening",
                        paths.switchd_log(*ns)));
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
}

void reload_switchds(const Topology& t, const TestbedOptions& options, const TestbedPaths& paths) {
  int ordinal = 0;
  for (const auto& ns : t.namespaces) {
    if (!is_switch(ns)) continue;
    write_config(ns, ordinal++, options, paths);
    const int pid = running_pid(paths.switchd_pid(ns), {"switchd", ns.netns});
    if (pid == 0 || ::kill(pid, SIGHUP) != 0)
      throw Error(ExitCode::infrastructure,
                  fmt::format("the forwarding process of {} is not running; its log is {}; bring "
                              "the testbed down and up again",
                              ns.netns, paths.switchd_log(ns)));
  }
}

}  // namespace rocehil::testbed::dataplane
