#include "switches/switch_agents.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <thread>

#include "rocehil/common/error.hpp"
#include "rocehil/testbed/snmp_files.hpp"
#include "switches/snmp_probe.hpp"
#include "switches/snmp_secrets.hpp"
#include "tools/files.hpp"
#include "tools/process.hpp"

namespace rocehil::testbed {

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

constexpr auto wait_limit = std::chrono::seconds(15);

void start_snmpd(const Namespace& ns, const Topology& t, const TestbedPaths& paths,
                 const SnmpSecrets& secrets, const std::string& rocehil) {
  // A fresh engine state each time: a user or engine id from an earlier `up` never lingers.
  std::error_code ec;
  fs::remove_all(paths.snmpd_persistent_dir(ns), ec);
  // snmpd makes cert_indexes itself, but says so in its log.
  make_directory(paths.snmpd_persistent_dir(ns), fs::perms::owner_all);
  make_directory(paths.snmpd_persistent_dir(ns) + "/cert_indexes", fs::perms::owner_all);
  // 0600: it holds the community and the v3 keys.
  write_file(paths.snmpd_conf(ns), snmpd_conf(ns, t, paths, secrets, rocehil),
             fs::perms::owner_read | fs::perms::owner_write);
  run_checked(fmt::format("starting snmpd in {}", ns.netns), snmpd_argv(ns, paths));
}

void start_lldpd(const Namespace& ns, const TestbedPaths& paths) {
  write_file(paths.lldpd_conf(ns), lldpd_conf(ns),
             fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read |
                 fs::perms::others_read);
  run_checked(fmt::format("starting lldpd in {}", ns.netns), lldpd_argv(ns, paths));
}

void wait_for_snmpd(const Namespace& ns, const TestbedPaths& paths, const std::string& community,
                    Clock::time_point deadline) {
  std::string detail;
  while (!snmp_answers(ns.mgmt_address, community, 300, detail)) {
    if (Clock::now() > deadline)
      throw Error(
          ExitCode::infrastructure,
          fmt::format("snmpd in {} does not answer a GET of sysName on {}:161 after {} s "
                      "({}); its log is {}",
                      ns.netns, ns.mgmt_address, wait_limit.count(), detail, paths.snmpd_log(ns)));
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

// lldpd applies its file (lldpd -O) through an lldpcli of its own after it started.
void wait_for_configuration(const Namespace& ns, const TestbedPaths& paths,
                            Clock::time_point deadline) {
  const std::vector<std::string> argv = {"lldpcli", "-u",   paths.lldpd_socket(ns), "-f",
                                         "json0",   "show", "configuration"};
  std::string detail = "its configuration is not applied";
  while (true) {
    const CommandResult r = run(argv);
    if (r.exit_status == 0) {
      try {
        if (lldpd_configured(nlohmann::json::parse(r.out), ns)) return;
      } catch (const nlohmann::json::exception& e) {
        detail = fmt::format("lldpcli printed JSON that does not parse: {}", e.what());
      }
    } else {
      detail = r.err.substr(0, r.err.find('\n'));
    }
    if (Clock::now() > deadline)
      throw Error(ExitCode::infrastructure,
                  fmt::format("lldpd in {}: {} after {} s; compare 'lldpcli -u {} show "
                              "configuration' with {} (lldpd logs to syslog)",
                              ns.netns, detail, wait_limit.count(), paths.lldpd_socket(ns),
                              paths.lldpd_conf(ns)));
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

void ask_to_send(const Namespace& ns, const TestbedPaths& paths) {
  run_checked(fmt::format("asking lldpd in {} to send", ns.netns),
              {"lldpcli", "-u", paths.lldpd_socket(ns), "update"});
}

void wait_for_neighbors(const Namespace& ns, const Topology& t, const TestbedPaths& paths,
                        Clock::time_point deadline) {
  const auto expected = expected_lldp_neighbors(ns, t);
  auto asked = Clock::now();
  while (true) {
    std::vector<LldpNeighbor> seen;
    std::string detail;
    if (lldp_neighbors(paths.lldpd_socket(ns), seen, detail)) {
      const auto missing = missing_lldp_neighbors(expected, seen);
      if (missing.empty()) return;
      detail = fmt::format("no LLDP neighbour {}", fmt::join(missing, ", "));
      // A frame sent while its receiver was still starting (lldpd waits for its configuration)
      // is lost until the next interval: ask the silent neighbours again rather than wait.
      if (Clock::now() - asked > std::chrono::milliseconds(500)) {
        for (const auto& e : expected)
          if (std::find(seen.begin(), seen.end(), e) == seen.end())
            if (const Namespace* far = t.find(e.system_name)) ask_to_send(*far, paths);
        asked = Clock::now();
      }
    }
    if (Clock::now() > deadline)
      throw Error(ExitCode::infrastructure,
                  fmt::format("lldpd in {}: {} after {} s; see 'lldpcli -u {} show neighbors' "
                              "(lldpd logs to syslog)",
                              ns.netns, detail, wait_limit.count(), paths.lldpd_socket(ns)));
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

}  // namespace

bool lldp_neighbors(const std::string& socket, std::vector<LldpNeighbor>& out,
                    std::string& detail) {
  CommandResult r;
  try {
    r = run({"lldpcli", "-u", socket, "-f", "json0", "show", "neighbors"});
  } catch (const Error& e) {
    detail = e.what();
    return false;
  }
  if (r.exit_status != 0) {
    // lldpcli: "[WARN/control] unable to connect to socket ...: No such file or directory".
    const std::string& text = r.err.empty() ? r.out : r.err;
    detail = text.empty() ? fmt::format("lldpcli exited {}", r.exit_status)
                          : text.substr(0, text.find('\n'));
    return false;
  }
  try {
    out = parse_lldp_neighbors(nlohmann::json::parse(r.out));
  } catch (const nlohmann::json::exception& e) {
    detail = fmt::format("lldpcli printed JSON that does not parse: {}", e.what());
    return false;
  }
  detail = fmt::format("{} neighbour{}", out.size(), out.size() == 1 ? "" : "s");
  return true;
}

void start_switch_agents(const Topology& t, const TestbedPaths& paths, const std::string& rocehil,
                         const StepReporter& report) {
  make_directory(paths.snmp_dir(), fs::perms::owner_all);
  // Searchable by all: lldpcli runs as _lldpd (paths.hpp).
  make_directory(TestbedPaths::public_run_dir(),
                 fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                     fs::perms::others_read | fs::perms::others_exec);
  const SnmpSecrets secrets = ensure_snmp_secrets(paths);
  std::vector<const Namespace*> switches, speakers;
  for (const auto& ns : t.namespaces) {
    if (is_switch(ns)) switches.push_back(&ns);
    if (runs_lldpd(ns)) speakers.push_back(&ns);
  }
  report(fmt::format("snmpd in {} switches (community in {}), lldpd in {} namespaces",
                     switches.size(), paths.snmp_community(), speakers.size()));
  // snmpd first: lldpd registers with its AgentX socket as it starts.
  for (const Namespace* ns : switches) start_snmpd(*ns, t, paths, secrets, rocehil);
  for (const Namespace* ns : speakers) start_lldpd(*ns, paths);
  const auto deadline = Clock::now() + wait_limit;
  for (const Namespace* ns : speakers) wait_for_configuration(*ns, paths, deadline);
  // Each lldpd sent its first frames as it started, perhaps before its neighbours listened:
  // now that all do, every one sends again.
  for (const Namespace* ns : speakers) ask_to_send(*ns, paths);
  for (const Namespace* ns : switches) {
    wait_for_snmpd(*ns, paths, secrets.community, deadline);
    run_checked(fmt::format("turning off the interface cache of snmpd in {}", ns->netns),
                cache_off_argv(*ns, secrets));
  }
  // Hosts too: `status` right after `up` then shows every namespace with its neighbours.
  for (const Namespace* ns : speakers) wait_for_neighbors(*ns, t, paths, deadline);
}

void remove_switch_agent_files(const TestbedPaths& paths, std::string_view id) {
  std::error_code ignored;
  if (!paths.dir.empty())
    for (const auto& entry : fs::directory_iterator(paths.snmp_dir(), ignored))
      if (entry.path().extension() == ".pid") fs::remove(entry.path(), ignored);
  const std::string mine = netns_prefix(id);
  for (const auto& entry : fs::directory_iterator(TestbedPaths::public_run_dir(), ignored))
    // remove_all: the FRR daemons' sockets are in a directory per switch.
    if (entry.path().filename().string().starts_with(mine)) fs::remove_all(entry.path(), ignored);
}

}  // namespace rocehil::testbed
