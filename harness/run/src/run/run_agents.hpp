#pragma once

// The run's agents when the inventory names a controller: one per host for the whole run,
// started by the host's launcher (`rocehil agent --connect ... --detach`, the run's secret on its
// stdin) and dialing in to one event loop; every case then opens sessions on them.

#include <atomic>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "rocehil/channel/run_secret.hpp"
#include "rocehil/inventory/inventory.hpp"
#include "rocehil/remote/dialed_agents.hpp"
#include "rocehil/remote/host_ssh.hpp"
#include "rocehil/run/events.hpp"

namespace rocehil::run {

class RunAgents final : public remote::DialedAgentsEvents {
 public:
  // Listens where the inventory's controller says. Throws rocehil::Error when it cannot.
  RunAgents(const inventory::Inventory& inventory, std::vector<const inventory::Host*> hosts,
            const std::string& run_id, RunEvents& events);
  ~RunAgents() override;  // the connections close: every agent stops and exits

  // Starts every host's agent, at most `fanout` launchers at once while the loop turns, and
  // waits until each has joined or the controller's join_timeout_s has passed (or `interrupt`).
  // Returns the hosts that did not join, each with why.
  std::vector<MissingAgent> start(const remote::SshMultiplex* multiplex, std::size_t fanout,
                                  const std::atomic<bool>& interrupt);

  remote::DialedAgents& dialed() { return *dialed_; }

 private:
  std::vector<MissingAgent> await_external(std::chrono::steady_clock::time_point began,
                                           const std::atomic<bool>& interrupt);
  void agent_joined(const std::string& host, const std::string& peer) override;
  void agent_refused(const std::string& peer, const std::string& why) override;
  void agent_lost(const std::string& host, const std::string& why) override;
  std::optional<std::string> refusal_from(const inventory::Host& host) const;

  const inventory::Controller controller_;
  std::vector<const inventory::Host*> hosts_;
  std::string run_id_;
  RunEvents& events_;
  channel::RunSecret secret_;
  std::map<std::string, std::string> refusals_;  // peer address -> the last refusal's reason
  // Before dialed_, so destroyed after it: the connections close first, the agents end on their
  // own, and their Slurm steps with them.
  std::vector<std::unique_ptr<remote::AgentLink>> slurm_steps_;
  std::unique_ptr<remote::DialedAgents> dialed_;
};

}  // namespace rocehil::run
