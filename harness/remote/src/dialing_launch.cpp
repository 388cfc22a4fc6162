#include "rocehil/remote/dialing_launch.hpp"

#include <fmt/format.h>

#include <mutex>
#include <string>
#include <string_view>
#include <thread>

#include "rocehil/common/error.hpp"
#include "rocehil/remote/as_root.hpp"
#include "rocehil/remote/fan_out.hpp"
#include "rocehil/remote/run_command.hpp"
#include "rocehil/remote/slurm.hpp"

namespace rocehil::remote {

DialingLaunched launch_dialing_agents(DialedAgents& dialed,
                                      const std::vector<const inventory::Host*>& hosts,
                                      const channel::RunSecret& secret, const DialingLaunch& launch,
                                      const std::atomic<bool>& interrupt,
                                      const std::function<void(std::size_t)>& progress) {
  const auto deadline = DialedAgents::Clock::now() + launch.timeout;
  std::mutex mutex;
  std::map<std::string, std::string> failed;
  DialingLaunched out;

  // Slurm: one step per agent binary for all its nodes.
  std::vector<const inventory::Host*> by_ssh;
  std::map<std::string, std::vector<std::string>> slurm_nodes;  // agent path -> nodes
  for (const inventory::Host* h : hosts)
    if (h->launcher == inventory::Launcher::slurm)
      slurm_nodes[h->agent].push_back(h->name);
    else
      by_ssh.push_back(h);
  std::vector<std::vector<std::string>> step_nodes;
  for (const auto& [agent_path, nodes] : slurm_nodes) {
    const std::string job = require_slurm_allocation("hosts with launcher slurm").job_id;
    AgentCommand step{.name = fmt::format("the Slurm step of {} agent(s)", nodes.size()),
                      .argv = srun_step_on_nodes_argv(job, nodes,
                                                      {agent_path, "agent", "--connect",
                                                       launch.connect, "--run-id", launch.run_id})};
    try {
      out.slurm_steps.push_back(launch_agent(step, secret.for_launcher() + "\n"));
      step_nodes.push_back(nodes);
    } catch (const Error& e) {
      for (const auto& n : nodes) failed[n] = e.what();
    }
  }

  std::atomic<bool> launched{false};
  // The launchers wait for their agents to join, which needs this thread's loop: they run beside.
  std::thread launcher([&] {
    fan_out(by_ssh.size(), launch.fanout, [&](std::size_t i) {
      const inventory::Host& host = *by_ssh[i];
      const AgentCommand command = host_command(
          host,
          // Root where the login allows it, to change and put back NIC settings; as the login
          // otherwise (traffic needs no root, and a setting then fails naming the host).
          as_root(host.agent,
                  {"agent", "--connect", launch.connect, "--run-id", launch.run_id, "--as",
                   host.name, "--detach"},
                  WithoutRoot::run_as_login),
          launch.multiplex);
      RunOptions options;
      options.timeout = launch.timeout;
      options.stdin_text = secret.for_launcher() + "\n";
      const CommandResult r = run_command(command.argv, options);
      if (r.succeeded()) return;
      const std::lock_guard lock(mutex);
      failed[host.name] = r.timed_out
                              ? fmt::format("its agent did not start within {} s",
                                            std::chrono::duration<double>(launch.timeout).count())
                              : r.reason();
    });
    launched = true;
  });

  std::size_t shown = static_cast<std::size_t>(-1);
  while (!interrupt) {
    const std::size_t joined = dialed.joined_count();
    if (joined != shown && progress) progress(joined);
    shown = joined;
    if ((launched && joined == hosts.size()) || DialedAgents::Clock::now() >= deadline) break;
    for (std::size_t s = 0; s < out.slurm_steps.size(); ++s) {
      if (!out.slurm_steps[s]) continue;
      try {  // its agents print nothing: a reply never comes, an ended step throws
        (void)out.slurm_steps[s]->receive(DialedAgents::Clock::now());
      } catch (const Error& e) {
        const std::lock_guard lock(mutex);
        for (const auto& n : step_nodes[s])
          if (dialed.hello(n) == nullptr)
            failed[n] = fmt::format("the Slurm step ended: {}", e.what());
        out.slurm_steps[s].reset();
      }
    }
    if (launched) {
      const std::lock_guard lock(mutex);
      if (joined + failed.size() >= hosts.size()) break;  // nobody else is coming
    }
    dialed.turn(std::chrono::milliseconds(50));
  }
  launcher.join();  // each launcher ends by the timeout

  std::erase_if(out.slurm_steps, [](const auto& step) { return !step; });
  for (const inventory::Host* h : hosts) {
    if (dialed.hello(h->name) != nullptr) continue;
    const auto f = failed.find(h->name);
    out.missing[h->name] =
        f != failed.end() ? f->second
        : interrupt       ? std::string("the run was interrupted")
                          : fmt::format(
                                "its agent started but did not dial in to "
                                      "{} within {} s",
                                launch.connect, std::chrono::duration<double>(launch.timeout).count());
  }
  return out;
}

}  // namespace rocehil::remote
