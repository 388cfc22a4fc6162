#pragma once

#include <string>
#include <vector>

#include "rocehil/agent/protocol.hpp"
#include "rocehil/inventory/inventory.hpp"
#include "rocehil/remote/agent_link.hpp"
#include "rocehil/remote/host_ssh.hpp"
#include "rocehil/run/collective_run.hpp"
#include "rocehil/traffic/collective.hpp"
#include "rocehil/traffic/rank_order.hpp"

namespace rocehil::run {

// The ranks of a collective over inventory hosts: every NIC of every selected host, in the order
// the placement gives, each with the agent command that reaches its host and the setup its NIC
// needs. `rocehil traffic collective` and `rocehil run` build their ranks the same way.
struct CollectiveRanks {
  std::vector<CollectiveRankInfo> infos;
  std::vector<agent::SetupRequest> setups;  // provider, device, port, GID index, address, MTU, TC
  std::vector<remote::AgentCommand> commands;  // one agent per rank
  std::vector<std::string> hosts;              // each rank's host name
  std::vector<double> link_gbps;               // each rank's NIC speed (0: not in the inventory)
  int ranks_per_host = 1;  // NICs per host (hierarchical_allreduce's local ranks)
  std::string provider;    // soft, verbs, or mixed
};

struct RankSettings {
  traffic::Pattern pattern = traffic::Pattern::ring_allreduce;
  traffic::Placement placement = traffic::Placement::packed;
  std::string provider{};  // overrides every host's provider when set
  std::uint32_t mtu = 1024;
  std::uint32_t tx_depth = 64;
  int sl = 0;
  int ack_timeout = 14;  // verbs' exponent (suites::ack_timeout_us)
  int traffic_class = 0;
  std::vector<int> per_qp_traffic_classes{};  // QP i of each connection: item i % n
  const remote::SshMultiplex* multiplex = nullptr;
};

// Throws rocehil::Error (bad input) naming `inventory_file` when fewer than 2 ranks result or
// hierarchical_allreduce meets hosts with different NIC counts.
CollectiveRanks collective_ranks(const std::vector<const inventory::Host*>& hosts,
                                 const RankSettings& settings, const std::string& inventory_file,
                                 const std::string& selection);

}  // namespace rocehil::run
