#pragma once

// One rank of a collective in `rocehil agent`: the plan built from the setup request, the
// memory, CQ and QPs it needs (peer by peer, qps each), and the runner. The session owns the
// provider, which must outlive this.

#include <atomic>
#include <memory>
#include <vector>

#include "rocehil/agent/protocol.hpp"
#include "rocehil/traffic/collective.hpp"
#include "rocehil/traffic/collective_executor.hpp"
#include "rocehil/traffic/provider.hpp"

namespace rocehil::agent {

class AgentCollective {
 public:
  // Builds the plan, registers and fills the region, creates the QPs. Throws rocehil::Error
  // (bad input: options the plan refuses, more QPs than an agent takes).
  AgentCollective(traffic::Provider& provider, const SetupRequest& setup);
  ~AgentCollective();
  AgentCollective(const AgentCollective&) = delete;
  AgentCollective& operator=(const AgentCollective&) = delete;

  // One endpoint per QP: peer by peer in ascending rank, qps each.
  std::vector<PeerEndpoint> endpoints() const;
  // Connects QP i to peers[i] and posts the receives. Throws on a count mismatch.
  void connect(const std::vector<PeerEndpoint>& peers);
  // Runs warm-up and measured iterations. The first run after setup also reports the output's
  // CRC (its data is the verified iteration's). Never throws: errors go in the results.
  ResultsEvent run(const StartRequest& start, traffic::LiveProgress& progress,
                   const std::atomic<bool>& stop);

 private:
  traffic::Provider& provider_;
  SetupRequest setup_;
  std::unique_ptr<traffic::CollectivePlan> plan_;
  std::vector<int> peers_;
  traffic::MemoryRegion region_{};
  std::unique_ptr<traffic::CompletionQueue> cq_;
  std::vector<std::unique_ptr<traffic::QueuePair>> qps_;
  std::unique_ptr<traffic::CollectiveRunner> runner_;
  bool first_run_ = true;
  bool broken_ = false;  // a run was stopped or failed midway: its state cannot go on
};

}  // namespace rocehil::agent
