#include "rocehil/remote/dialing_launch.hpp"

#include <fmt/format.h>

#include <mutex>
#include <thread>

#include "rocehil/remote/fan_out.hpp"
#include "rocehil/remote/run_command.hpp"

namespace rocehil::remote {

std::map<std::string, std::string> launch_dialing_agents(
    DialedAgents& dialed, const std::vector<const inventory::Host*>& hosts,
    const channel::RunSecret& secret, const DialingLaunch& launch,
    const std::atomic<bool>& interrupt, const std::function<void(std::size_t)>& progress) {
  const auto deadline = DialedAgents::Clock::now() + launch.timeout;
  std::mutex mutex;
  std::map<std::string, std::string> failed;
  std::atomic<bool> launched{false};
  // The launchers wait for their agents to join, which needs this thread's loop: they run beside.
  std::thread launcher([&] {
    fan_out(hosts.size(), launch.fanout, [&](std::size_t i) {
      const inventory::Host& host = *hosts[i];
      const AgentCommand command =
          host_command(host,
                       {host.agent, "agent", "--connect", launch.connect, "--run-id", launch.run_id,
                        "--as", host.name, "--detach"},
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
    if (launched) {
      const std::lock_guard lock(mutex);
      if (joined + failed.size() >= hosts.size()) break;  // nobody else is coming
    }
    dialed.turn(std::chrono::milliseconds(50));
  }
  launcher.join();  // each launcher ends by the timeout

  std::map<std::string, std::string> missing;
  for (const inventory::Host* h : hosts) {
    if (dialed.hello(h->name) != nullptr) continue;
    const auto f = failed.find(h->name);
    missing[h->name] =
        f != failed.end() ? f->second
        : interrupt       ? std::string("the run was interrupted")
                          : fmt::format(
                                "its agent started but did not dial in to "
                                      "{} within {} s",
                                launch.connect, std::chrono::duration<double>(launch.timeout).count());
  }
  return missing;
}

}  // namespace rocehil::remote
