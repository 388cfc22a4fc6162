#include "run_agents.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <map>
#include <mutex>
#include <thread>

#include "rocehil/common/error.hpp"
#include "rocehil/remote/fan_out.hpp"
#include "rocehil/remote/run_command.hpp"

namespace rocehil::run {

namespace {

using Clock = std::chrono::steady_clock;

std::vector<remote::ExpectedHost> expected_of(const std::vector<const inventory::Host*>& hosts) {
  std::vector<remote::ExpectedHost> expected;
  for (const inventory::Host* h : hosts) {
    remote::ExpectedHost e{h->name, {}};
    for (const auto& nic : h->nics)
      if (!nic.ip.empty()) e.addresses.push_back(nic.ip);
    expected.push_back(std::move(e));
  }
  return expected;
}

remote::DialedAgentsOptions listen_options(const inventory::Controller& c) {
  remote::DialedAgentsOptions o;
  o.listen_address = c.listen.empty() ? c.address : c.listen;
  o.port = static_cast<std::uint16_t>(c.port);
  return o;
}

}  // namespace

RunAgents::RunAgents(const inventory::Inventory& inventory,
                     std::vector<const inventory::Host*> hosts, const std::string& run_id,
                     RunEvents& events)
    : controller_(inventory.controller.value()),
      hosts_(std::move(hosts)),
      run_id_(run_id),
      events_(events),
      secret_(channel::RunSecret::generate()) {
  std::vector<std::string> slurm_hosts;
  for (const inventory::Host* h : hosts_)
    if (h->launcher == inventory::Launcher::slurm) slurm_hosts.push_back(h->name);
  if (!slurm_hosts.empty())
    throw input_error(fmt::format(
        "{}: controller: hosts with launcher slurm ({}) cannot dial home yet (a Slurm step ends "
        "with its launcher); remove 'controller:' to start their agents per case",
        inventory.file, fmt::join(slurm_hosts, ", ")));
  dialed_ = std::make_unique<remote::DialedAgents>(secret_, run_id_, expected_of(hosts_),
                                                   listen_options(controller_), *this);
}

RunAgents::~RunAgents() = default;

std::vector<MissingAgent> RunAgents::start(const remote::SshMultiplex* multiplex,
                                           std::size_t fanout, const std::atomic<bool>& interrupt) {
  const auto began = Clock::now();
  const auto join_timeout = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::duration<double>(controller_.join_timeout_s));
  const auto deadline = began + join_timeout;
  const std::string connect = fmt::format("{}:{}", controller_.address, dialed_->port());

  // The launchers run in threads of their own; this thread turns the loop their agents dial.
  std::mutex mutex;
  std::map<std::string, std::string> launch_failures;
  std::atomic<bool> launched{false};
  std::thread launcher([&] {
    remote::fan_out(hosts_.size(), fanout, [&](std::size_t i) {
      const inventory::Host& host = *hosts_[i];
      const remote::AgentCommand command =
          remote::host_command(host,
                               {host.agent, "agent", "--connect", connect, "--run-id", run_id_,
                                "--as", host.name, "--detach"},
                               multiplex);
      remote::RunOptions options;
      options.timeout = join_timeout;
      options.stdin_text = secret_.for_launcher() + "\n";
      const remote::CommandResult r = remote::run_command(command.argv, options);
      if (!r.succeeded()) {
        const std::lock_guard lock(mutex);
        launch_failures[host.name] =
            r.timed_out
                ? fmt::format("its agent did not start within {} s", controller_.join_timeout_s)
                : r.reason();
      }
    });
    launched = true;
  });

  std::size_t shown = static_cast<std::size_t>(-1);
  while (!interrupt) {
    const std::size_t joined = dialed_->joined_count();
    if (joined != shown) events_.agents_joining(joined, hosts_.size());
    shown = joined;
    if ((launched && joined == hosts_.size()) || Clock::now() >= deadline) break;
    if (launched) {
      const std::lock_guard lock(mutex);
      if (joined + launch_failures.size() >= hosts_.size()) break;  // nobody else is coming
    }
    dialed_->turn(std::chrono::milliseconds(50));
  }
  launcher.join();  // each launcher ends by the deadline (its timeout)

  std::vector<MissingAgent> missing;
  for (const inventory::Host* h : hosts_) {
    if (dialed_->hello(h->name) != nullptr) continue;
    const auto failed = launch_failures.find(h->name);
    missing.push_back(
        {h->name, failed != launch_failures.end() ? failed->second
                  : interrupt                     ? std::string("the run was interrupted")
                              : fmt::format("its agent started but did not dial in to {} within "
                                            "{} s",
                                            connect, controller_.join_timeout_s)});
  }
  events_.agents_joined(dialed_->joined_count(),
                        std::chrono::duration<double>(Clock::now() - began).count(), missing);
  return missing;
}

void RunAgents::agent_joined(const std::string&, const std::string&) {}

void RunAgents::agent_refused(const std::string& peer, const std::string& why) {
  events_.agent_refused(peer, why);
}

void RunAgents::agent_lost(const std::string& host, const std::string& why) {
  events_.agent_lost(host, why);
}

}  // namespace rocehil::run
