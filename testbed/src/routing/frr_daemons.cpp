#include "routing/frr_daemons.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <thread>

#include "rocehil/common/error.hpp"
#include "rocehil/testbed/frr_files.hpp"
#include "tools/files.hpp"
#include "tools/host_checks.hpp"
#include "tools/process.hpp"

namespace rocehil::testbed {

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// vtysh's JSON for `command` to `daemon`; false and `problem` set when vtysh fails or prints
// what does not parse.
bool vtysh_json(const Namespace& ns, std::string_view daemon, std::string_view command,
                nlohmann::json& out, std::string& problem) {
  const auto argv = vtysh_argv(ns, daemon, command);
  CommandResult r;
  try {
    r = run(argv);
  } catch (const Error& e) {
    problem = e.what();
    return false;
  }
  if (r.exit_status != 0) {
    // vtysh: "Error response from daemon: ..." or "Exiting: failed to connect to any daemons."
    const std::string& text = r.err.empty() ? r.out : r.err;
    problem = fmt::format("'{}' exited {}: {}", shell_words(argv), r.exit_status,
                          text.substr(0, text.find('\n')));
    return false;
  }
  try {
    out = nlohmann::json::parse(r.out);
    return true;
  } catch (const nlohmann::json::exception& e) {
    problem = fmt::format("'{}' printed JSON that does not parse: {}", shell_words(argv), e.what());
    return false;
  }
}

}  // namespace

void require_frr() {
  for (auto daemon : frr_daemons)
    if (!fs::exists(fmt::format("{}/{}", frr_daemon_dir, daemon)))
      throw input_error(fmt::format(
          "--routing bgp needs FRR's {}/{}; install Debian's frr ('apt-get install frr', or "
          "scripts/install-deps.sh in the source tree), or use --routing static",
          frr_daemon_dir, daemon));
  require_tools({"vtysh"});
}

void start_routing(const Topology& t, const TestbedOptions& options, const TestbedPaths& paths,
                   const StepReporter& report) {
  make_directory(paths.frr_dir(), fs::perms::owner_all);
  // Searchable by all, as the switches' agents need it (paths.hpp: lldpcli runs as _lldpd).
  make_directory(TestbedPaths::public_run_dir(),
                 fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                     fs::perms::others_read | fs::perms::others_exec);
  int switches = 0;
  for (const auto& ns : t.namespaces) switches += is_switch(ns);
  report(fmt::format(
      "routing: FRR (zebra, bfdd, bgpd) in {} switches, eBGP on every uplink, BFD {} ms x {}; "
      "configurations in {}",
      switches, options.bfd.interval_ms, options.bfd.multiplier, paths.frr_dir()));
  for (const auto& ns : t.namespaces) {
    if (!is_switch(ns)) continue;
    // Root's only: a vty socket is a root shell on the switch's routing.
    make_directory(TestbedPaths::frr_socket_dir(ns), fs::perms::owner_all);
    for (auto daemon : frr_daemons) {
      write_file(paths.frr_conf(ns, daemon), frr_config(daemon, ns, t, options),
                 fs::perms::owner_read | fs::perms::owner_write);
      // -d returns once the daemon has read its configuration and listens.
      run_checked(fmt::format("starting {} in {} (its log: {})", daemon, ns.netns,
                              paths.frr_log(ns, daemon)),
                  frr_argv(daemon, ns, paths));
    }
  }
}

SwitchRouting read_routing(const Namespace& ns, const Topology& t) {
  SwitchRouting out;
  nlohmann::json summary, bfd, routes;
  if (!vtysh_json(ns, "bgpd", "show bgp summary json", summary, out.problem) ||
      !vtysh_json(ns, "bfdd", "show bfd peers json", bfd, out.problem) ||
      !vtysh_json(ns, "zebra", "show ip route json", routes, out.problem))
    return out;
  try {
    out.sessions = parse_sessions(bgp_neighbors(ns, t), summary, bfd);
    out.routes = parse_rack_routes(routed_rack_prefixes(ns, t), routes);
  } catch (const nlohmann::json::exception& e) {
    out.problem = fmt::format("vtysh printed JSON unlike FRR 8.4's: {}", e.what());
  }
  return out;
}

void wait_for_routing(const Topology& t, const TestbedPaths& paths, std::chrono::seconds limit,
                      const StepReporter& report) {
  report(fmt::format("routing: waiting (at most {} s) for every BGP session and every path",
                     limit.count()));
  const auto deadline = Clock::now() + limit;
  while (true) {
    std::vector<std::string> problems;
    for (const auto& ns : t.namespaces) {
      if (!is_switch(ns)) continue;
      for (const auto& p : routing_problems(ns, t, read_routing(ns, t)))
        problems.push_back(fmt::format("{}: {}", ns.name, p));
    }
    if (problems.empty()) return;
    if (Clock::now() > deadline) {
      const Namespace* first = nullptr;
      for (const auto& ns : t.namespaces)
        if (is_switch(ns) && first == nullptr) first = &ns;
      throw Error(ExitCode::infrastructure,
                  fmt::format("routing has not converged after {} s: {}; see the daemons' logs "
                              "({}) and 'vtysh --vty_socket {} -c \"show bgp summary\"'",
                              limit.count(), fmt::join(problems, "; "),
                              paths.frr_log(*first, "bgpd"), TestbedPaths::frr_socket_dir(*first)));
    }
    // A session comes up within a second or two of its link (connect retry 1 s); polled often
    // enough that `up` does not wait much past it, seldom enough to cost little.
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
}

}  // namespace rocehil::testbed
