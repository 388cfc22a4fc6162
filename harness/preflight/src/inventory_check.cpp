#include "rocehil/preflight/inventory_check.hpp"

#include <fmt/format.h>

#include <mutex>

#include "rocehil/common/error.hpp"
#include "rocehil/remote/fan_out.hpp"
#include "rocehil/remote/host_ssh.hpp"
#include "rocehil/remote/run_command.hpp"

namespace rocehil::preflight {

namespace {

// Writes stdin to a temporary file next to the destination and renames it over, so an agent that
// is running keeps its old inode and a half-copied binary is never on the path. "$1" is data.
constexpr const char* deploy_script =
    "set -e; dst=$1; tmp=\"$dst.rocehil-deploy.$$\"; mkdir -p -- \"$(dirname -- \"$dst\")\"; "
    "cat > \"$tmp\"; chmod 755 \"$tmp\"; mv -f -- \"$tmp\" \"$dst\"";

std::vector<std::string> probed_netdevs(const inventory::Host& host) {
  std::vector<std::string> netdevs;
  for (const auto& nic : host.nics)
    if (!nic.netdev.empty()) netdevs.push_back(nic.netdev);
  return netdevs;
}

struct Probe {
  remote::CommandResult run;
  bool answered = false;
};

Probe probe(const inventory::Host& host, const CheckOptions& o) {
  const remote::AgentCommand command =
      remote::host_command(host, probe_command(host.agent, probed_netdevs(host)));
  remote::RunOptions run_options;
  run_options.timeout = o.timeout;
  Probe p;
  p.run = remote::run_command(command.argv, run_options);
  // ssh exits 255 for its own failures; the probe script itself always exits 0.
  p.answered = p.run.started && !p.run.timed_out && p.run.exit_code != 255 &&
               p.run.out.find("@@ host") != std::string::npos;
  return p;
}

CheckItem deploy_agent(const inventory::Host& host, const CheckOptions& o) {
  if (host.agent.find('/') == std::string::npos)
    return {.name = "deploy",
            .status = CheckStatus::fail,
            .detail = fmt::format("the agent is '{}', a name looked up on the host's PATH; set "
                                  "'agent' to an absolute path to deploy there",
                                  host.agent)};
  const remote::AgentCommand command =
      remote::host_command(host, {"sh", "-c", deploy_script, "rocehil-deploy", host.agent});
  remote::RunOptions run_options;
  run_options.timeout = o.timeout;
  run_options.stdin_file = o.local_binary;
  const remote::CommandResult r = remote::run_command(command.argv, run_options);
  if (!r.succeeded())
    return {.name = "deploy",
            .status = CheckStatus::fail,
            .detail =
                fmt::format("copying {} to {} failed: {}", o.local_binary, host.agent, r.reason())};
  return {.name = "deploy",
          .status = CheckStatus::info,
          .detail = fmt::format("copied {} to {} in {:.1f} s", o.controller_version, host.agent,
                                r.seconds)};
}

HostCheck check_host(const inventory::Host& host, const CheckOptions& o) {
  HostCheck check;
  check.host = host.name;
  check.address = host.address;
  Probe p = probe(host, o);
  std::vector<CheckItem> deployed;
  if (p.answered && o.deploy) {
    const HostFacts first = parse_probe_output(p.run.out);
    if (first.agent_version != o.controller_version) {
      deployed.push_back(deploy_agent(host, o));
      if (deployed.back().status != CheckStatus::fail) p = probe(host, o);
    }
  }
  check.ssh_ms = p.run.seconds * 1000;
  if (!p.answered) {
    check.verdict = HostVerdict::unreachable;
    check.unreachable = p.run.succeeded() || p.run.exit_code == 0
                            ? "the probe printed nothing; is the login shell a POSIX sh?"
                            : "ssh: " + p.run.reason();
    if (p.run.timed_out)
      check.unreachable = fmt::format("ssh: no answer within {} s",
                                      static_cast<double>(o.timeout.count()) / 1000.0);
    return check;
  }
  HostFacts facts = parse_probe_output(p.run.out);
  check.items.push_back({.name = "ssh",
                         .status = CheckStatus::ok,
                         .detail = fmt::format("{:.1f} ms to connect and probe", check.ssh_ms)});
  check.items.insert(check.items.end(), deployed.begin(), deployed.end());
  std::vector<CheckItem> evaluated = evaluate_host(host, facts, o.controller_version);
  check.items.insert(check.items.end(), evaluated.begin(), evaluated.end());
  check.verdict = verdict_of(host, facts, check.items);
  check.facts = std::move(facts);
  return check;
}

}  // namespace

CheckReport check_hosts(const inventory::Inventory& inventory,
                        const std::vector<const inventory::Host*>& hosts,
                        const std::string& selection, const CheckOptions& options) {
  CheckReport report;
  report.inventory_file = inventory.file;
  report.inventory_name = inventory.name;
  report.selection = selection;
  report.controller_version = options.controller_version;
  report.hosts.resize(hosts.size());
  std::mutex progress_mutex;
  std::uint64_t done = 0;
  remote::fan_out(hosts.size(), options.fanout, [&](std::size_t i) {
    try {
      report.hosts[i] = check_host(*hosts[i], options);
    } catch (const std::exception& e) {
      HostCheck& failed = report.hosts[i];
      failed.host = hosts[i]->name;
      failed.address = hosts[i]->address;
      failed.verdict = HostVerdict::unreachable;
      failed.unreachable = e.what();
    }
    const std::lock_guard lock(progress_mutex);
    ++done;
    if (options.on_progress) options.on_progress(done, hosts.size());
  });
  return report;
}

int check_exit_code(const CheckReport& report) {
  int code = 0;
  for (const auto& h : report.hosts) {
    if (h.verdict == HostVerdict::unreachable) return static_cast<int>(ExitCode::infrastructure);
    if (h.verdict == HostVerdict::failed) code = static_cast<int>(ExitCode::threshold_failed);
  }
  return code;
}

}  // namespace rocehil::preflight
