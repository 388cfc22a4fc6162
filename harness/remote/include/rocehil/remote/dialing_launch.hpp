#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "rocehil/channel/run_secret.hpp"
#include "rocehil/inventory/inventory.hpp"
#include "rocehil/remote/dialed_agents.hpp"
#include "rocehil/remote/host_ssh.hpp"

namespace rocehil::remote {

struct DialingLaunch {
  std::string run_id;
  std::string connect;                        // ADDRESS:PORT the agents dial
  std::size_t fanout = 32;                    // launchers running at once
  std::chrono::milliseconds timeout{60'000};  // for every host to join
  const SshMultiplex* multiplex = nullptr;
};

// What launching left: the hosts that did not join, each with why (the launcher's words, or
// silence), and the Slurm steps the joined agents run in, which live as long as this does
// (destroy them after the connections: the agents then end on their own, and the step with them).
struct DialingLaunched {
  std::map<std::string, std::string> missing;
  std::vector<std::unique_ptr<AgentLink>> slurm_steps;
};

// Starts one dialing agent on every host while this thread turns `dialed`'s loop for them. Hosts
// reached over ssh (or `local`) each get `agent --connect ... --as HOST --detach` with the
// secret on its stdin, at most `fanout` launchers at once in threads; hosts with launcher slurm
// get one step for all of them (`srun --nodelist=... --ntasks-per-node=1 --input=all`, the
// secret on srun's stdin, each agent naming its node from SLURMD_NODENAME), inside the
// allocation rocehil runs in. Returns once every host has joined, or each has joined or its
// launcher failed, or at the timeout or `interrupt`. `progress` is called with the number joined
// whenever it changes.
DialingLaunched launch_dialing_agents(DialedAgents& dialed,
                                      const std::vector<const inventory::Host*>& hosts,
                                      const channel::RunSecret& secret, const DialingLaunch& launch,
                                      const std::atomic<bool>& interrupt,
                                      const std::function<void(std::size_t)>& progress = {});

}  // namespace rocehil::remote
