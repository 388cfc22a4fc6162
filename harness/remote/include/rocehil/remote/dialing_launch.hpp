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

// Starts one dialing agent on every host through its launcher (`agent --connect ... --as HOST
// --detach`, the secret on its stdin), at most `fanout` launchers at once in threads, while this
// thread turns `dialed`'s loop for the agents they start. Returns once every host has joined,
// or each has joined or its launcher failed, or at the timeout or `interrupt`: the hosts that
// did not join, each with why (the launcher's words, or silence). `progress` is called with the
// number joined whenever it changes.
std::map<std::string, std::string> launch_dialing_agents(
    DialedAgents& dialed, const std::vector<const inventory::Host*>& hosts,
    const channel::RunSecret& secret, const DialingLaunch& launch,
    const std::atomic<bool>& interrupt, const std::function<void(std::size_t)>& progress = {});

}  // namespace rocehil::remote
