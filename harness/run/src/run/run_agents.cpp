#include "run/run_agents.hpp"

#include <fmt/format.h>

#include "rocehil/common/error.hpp"
#include "rocehil/remote/dialing_launch.hpp"

namespace rocehil::run {

namespace {

using Clock = std::chrono::steady_clock;

std::vector<remote::ExpectedHost> expected_of(const std::vector<const inventory::Host*>& hosts) {
  std::vector<remote::ExpectedHost> expected;
  for (const inventory::Host* h : hosts) {
    remote::ExpectedHost e{h->name, {}};
    for (const auto& nic : h->nics)
      if (!nic.ip.empty()) e.addresses.push_back(nic.ip);
    e.management = h->address;
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
      // Agents others start join under the fleet's name and key; rocehil's own, under the run's.
      run_id_(controller_.agents_external ? controller_.fleet : run_id),
      events_(events),
      secret_(controller_.agents_external ? channel::read_secret_file(controller_.secret_file)
                                          : channel::RunSecret::generate()) {
  dialed_ = std::make_unique<remote::DialedAgents>(secret_, run_id_, expected_of(hosts_),
                                                   listen_options(controller_), *this);
}

RunAgents::~RunAgents() = default;

std::vector<MissingAgent> RunAgents::start(const remote::SshMultiplex* multiplex,
                                           std::size_t fanout, const std::atomic<bool>& interrupt) {
  const auto began = Clock::now();
  if (controller_.agents_external) return await_external(began, interrupt);
  remote::DialingLaunch launch;
  launch.run_id = run_id_;
  launch.connect = fmt::format("{}:{}", controller_.address, dialed_->port());
  launch.fanout = fanout;
  launch.timeout = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::duration<double>(controller_.join_timeout_s));
  launch.multiplex = multiplex;
  remote::DialingLaunched launched = remote::launch_dialing_agents(
      *dialed_, hosts_, secret_, launch, interrupt,
      [&](std::size_t joined) { events_.agents_joining(joined, hosts_.size()); });
  slurm_steps_ = std::move(launched.slurm_steps);
  const auto& missed = launched.missing;
  std::vector<MissingAgent> missing;
  for (const inventory::Host* h : hosts_)  // in the inventory's order
    if (const auto m = missed.find(h->name); m != missed.end())
      missing.push_back({h->name, m->second});
  events_.agents_joined(dialed_->joined_count(),
                        std::chrono::duration<double>(Clock::now() - began).count(), missing);
  return missing;
}

// Nobody to start: the agents pdsh, clush, systemd or a DaemonSet started dial in by themselves.
std::vector<MissingAgent> RunAgents::await_external(Clock::time_point began,
                                                    const std::atomic<bool>& interrupt) {
  const auto deadline = began + std::chrono::duration_cast<std::chrono::milliseconds>(
                                    std::chrono::duration<double>(controller_.join_timeout_s));
  (void)dialed_->await_all(deadline, &interrupt, [&](std::size_t joined) {
    events_.agents_joining(joined, hosts_.size());
  });
  std::vector<MissingAgent> missing;
  for (const inventory::Host* h : hosts_) {
    if (dialed_->hello(h->name) != nullptr) continue;
    if (interrupt) {
      missing.push_back({h->name, "the run was interrupted"});
    } else if (const auto refused = refusal_from(*h)) {
      missing.push_back({h->name, *refused});
    } else {
      missing.push_back(
          {h->name, fmt::format("no agent of fleet '{}' dialed in from it ({}) to {}:{} within "
                                "{} s (agents: external: is one running there, with the fleet's "
                                "key?)",
                                controller_.fleet, h->address, controller_.address, dialed_->port(),
                                controller_.join_timeout_s)});
    }
  }
  events_.agents_joined(dialed_->joined_count(),
                        std::chrono::duration<double>(Clock::now() - began).count(), missing);
  return missing;
}

void RunAgents::agent_joined(const std::string&, const std::string&) {}

void RunAgents::agent_refused(const std::string& peer, const std::string& why) {
  refusals_[peer] = why;
  events_.agent_refused(peer, why);
}

// An agent that came from one of the host's addresses and was refused says more of why the
// host is missing than the wait does: a wrong key, another fleet, a name the inventory lacks.
std::optional<std::string> RunAgents::refusal_from(const inventory::Host& host) const {
  std::vector<std::string> addresses{host.address};
  for (const auto& nic : host.nics) addresses.push_back(nic.ip);
  for (const std::string& a : addresses)
    if (const auto it = refusals_.find(a); !a.empty() && it != refusals_.end())
      return fmt::format("an agent from {} dialed in and was refused: {}", a, it->second);
  return std::nullopt;
}

void RunAgents::agent_lost(const std::string& host, const std::string& why) {
  events_.agent_lost(host, why);
}

}  // namespace rocehil::run
