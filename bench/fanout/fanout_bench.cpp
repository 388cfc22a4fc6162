// Start and stop a trivial agent on many hosts with rocehil's launcher: ssh to every selected
// host, `rocehil agent`, a hello each way, stdin closed so each agent ends. bench/fanout/run
// times pdsh doing the same in the same run.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "rocehil/agent/protocol.hpp"
#include "rocehil/common/error.hpp"
#include "rocehil/inventory/load.hpp"
#include "rocehil/inventory/selection.hpp"
#include "rocehil/remote/agent_link.hpp"
#include "rocehil/remote/dialed_agents.hpp"
#include "rocehil/remote/dialing_launch.hpp"
#include "rocehil/remote/host_ssh.hpp"
#include "rocehil/remote/run_command.hpp"

namespace agent = rocehil::agent;
namespace remote = rocehil::remote;

namespace {

using Clock = std::chrono::steady_clock;

// One round: every agent started, greeted and ended. Returns seconds.
double round_trip(const std::vector<const rocehil::inventory::Host*>& hosts,
                  const remote::SshMultiplex* multiplex) {
  const auto start = Clock::now();
  {
    std::vector<std::unique_ptr<remote::AgentLink>> links;
    for (const auto* h : hosts)
      links.push_back(
          remote::launch_agent(remote::host_command(*h, {h->agent, "agent"}, multiplex)));
    for (auto& l : links) l->send(agent::Request{0, agent::HelloRequest{}});
    // Every ssh handshake at once shares this machine's cores with every sshd: at 256 hosts the
    // first hello can take longer than 30 s, which a bench should measure, not fail on.
    const auto deadline =
        Clock::now() + std::chrono::seconds(30) + std::chrono::milliseconds(500) * hosts.size();
    for (auto& l : links) {
      const auto reply = l->receive(deadline);
      if (!reply || !std::holds_alternative<agent::HelloReply>(reply->body))
        throw rocehil::Error(rocehil::ExitCode::infrastructure,
                             fmt::format("no hello from {}", l->name()));
    }
    remote::close_all(links);  // every agent's stdin closed, then each waited for
  }
  return std::chrono::duration<double>(Clock::now() - start).count();
}

struct Quiet : remote::DialedAgentsEvents {
  void agent_joined(const std::string&, const std::string&) override {}
  void agent_refused(const std::string& peer, const std::string& why) override {
    fmt::print(stderr, "refused {}: {}\n", peer, why);
  }
  void agent_lost(const std::string&, const std::string&) override {}
};

// One round with agents that dial home, as `rocehil run` starts them with a controller in the
// inventory: `agent --connect --detach` over each host's launcher, every hello in, every
// connection closed (the agents end on their own). Returns seconds.
double dial_round(const std::vector<const rocehil::inventory::Host*>& hosts,
                  const remote::SshMultiplex* multiplex, const std::string& address, int round) {
  const auto start = Clock::now();
  const auto secret = rocehil::channel::RunSecret::generate();
  std::vector<remote::ExpectedHost> expected;
  for (const auto* h : hosts) expected.push_back({h->name, {}});
  Quiet quiet;
  remote::DialedAgentsOptions options;
  options.listen_address = address;
  options.limits.per_address = hosts.size() + 1;
  const std::string run_id = fmt::format("bench-{}-{}", getpid(), round);
  remote::DialingLaunched launched;  // its Slurm step ends after the hub: declared first
  remote::DialedAgents hub(secret, run_id, expected, options, quiet);
  remote::DialingLaunch launch;
  launch.run_id = run_id;
  launch.connect = fmt::format("{}:{}", address, hub.port());
  launch.fanout = 32;
  launch.timeout = std::chrono::seconds(30) + std::chrono::milliseconds(500) * hosts.size();
  launch.multiplex = multiplex;
  const std::atomic<bool> never{false};
  launched = remote::launch_dialing_agents(hub, hosts, secret, launch, never);
  const auto& missing = launched.missing;
  if (!missing.empty())
    throw rocehil::Error(rocehil::ExitCode::infrastructure,
                         fmt::format("{} host(s) did not dial in, {}: {}", missing.size(),
                                     missing.begin()->first, missing.begin()->second));
  return std::chrono::duration<double>(Clock::now() - start).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app("rocehil's launcher: start and stop an agent on every selected host, N rounds");
  std::string inventory_file, selection = "all";
  int rounds = 5;
  bool multiplex = false;
  std::string launcher;
  std::string dial;
  app.add_option("inventory", inventory_file, "Inventory (a testbed's)")->required();
  app.add_option("--hosts", selection, "Host selection");
  app.add_option("--rounds", rounds, "Rounds; the median is printed")->check(CLI::Range(1, 1000));
  app.add_flag("--multiplex", multiplex,
               "Share one ssh connection per host (ControlMaster), as rocehil run does; the "
               "first round opens them");
  app.add_option("--launcher", launcher,
                 "Start agents with this launcher instead of the inventory's: slurm runs each "
                 "as a job step of the allocation in SLURM_JOB_ID (srun), as rocehil run "
                 "--launcher slurm does")
      ->check(CLI::IsMember({"ssh", "local", "slurm"}));
  app.add_option("--dial", dial,
                 "Agents dial home to this address of this machine (a controller in the "
                 "inventory): each round starts them with 'agent --connect --detach' and waits "
                 "for every hello");
  CLI11_PARSE(app, argc, argv);
  try {
    auto inv = rocehil::inventory::load_inventory(inventory_file);
    if (!launcher.empty())
      for (auto& h : inv.hosts) h.launcher = *rocehil::inventory::launcher_named(launcher);
    const auto hosts = rocehil::inventory::select_hosts(inv, selection);
    remote::SshMultiplex mux;
    if (multiplex) {
      char dir[] = "/tmp/rocehil-bench-ssh-XXXXXX";
      if (mkdtemp(dir) == nullptr) throw rocehil::system_error("mkdtemp", errno);
      mux.control_dir = dir;
    }
    std::vector<double> seconds;
    for (int r = 0; r < rounds; ++r)
      seconds.push_back(dial.empty() ? round_trip(hosts, multiplex ? &mux : nullptr)
                                     : dial_round(hosts, multiplex ? &mux : nullptr, dial, r));
    if (multiplex && launcher != "slurm") {
      for (const auto* h : hosts)
        remote::run_command(remote::ssh_multiplex_exit(*h, mux),
                            {.timeout = std::chrono::seconds(5)});
      std::filesystem::remove_all(mux.control_dir);
    }
    fmt::print("{{\"hosts\": {}, \"rounds\": {}, \"median_s\": {:.4f}, \"first_s\": {:.4f}}}\n",
               hosts.size(), rounds, median(seconds), seconds.front());
  } catch (const rocehil::Error& e) {
    fmt::print(stderr, "rocehil-bench-fanout: {}\n", e.what());
    return 3;
  }
  return 0;
}
