#pragma once

// N ranks of a collective in one process, for tests: each with its own soft provider on its own
// loopback address (127.0.0.10 + rank), connected to its plan's peers with the configured QPs,
// and run each in its own thread, as ranks on separate hosts run.
#include <sys/resource.h>
#include <algorithm>

#include <atomic>
#include <chrono>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "collective_expectations.hpp"
#include "rocehil/traffic/collective_data.hpp"
#include "rocehil/traffic/collective_executor.hpp"
#include "rocehil/traffic/provider.hpp"

namespace rocehil::traffic {

// A CQ whose owner polls late: it sleeps before every poll, as a rank descheduled on a busy
// host does, so that whatever happened meanwhile is seen in one batch.
class LatePollingCq final : public CompletionQueue {
 public:
  LatePollingCq(CompletionQueue& cq, std::chrono::microseconds nap) : cq_(cq), nap_(nap) {}
  std::size_t poll(std::span<Completion> out) override {
    std::this_thread::sleep_for(nap_);
    return cq_.poll(out);
  }

 private:
  CompletionQueue& cq_;
  std::chrono::microseconds nap_;
};

struct Rank {
  std::unique_ptr<Provider> provider;
  std::unique_ptr<CompletionQueue> cq;
  std::unique_ptr<CompletionQueue> late_cq;  // what the runner polls, when this rank is late
  MemoryRegion region;
  std::vector<std::unique_ptr<QueuePair>> qps;
  std::vector<PeerConnection> connections;
  std::unique_ptr<CollectiveRunner> runner;
  CollectiveResult result;
};

// Ranks on 127.0.0.(10+r), each connected to its plan's peers with `scaling.qps` QPs.
struct Job {
  std::unique_ptr<CollectivePlan> plan;
  std::vector<Rank> ranks;

  // `production_inputs`: the inputs of collective_data (what the agent fills) rather than the
  // test's own. `late_rank`: the rank that polls late (LatePollingCq), -1 for none.
  Job(const PlanOptions& options, const CollectiveConfig& config, bool production_inputs = false,
      int late_rank = -1)
      : plan(make_plan(options)) {
    const int n = plan->ranks();
    make_room_for_sockets(n, config.scaling.qps);
    ranks.resize(static_cast<std::size_t>(n));
    for (int r = 0; r < n; ++r) {
      Rank& rank = ranks[static_cast<std::size_t>(r)];
      ProviderOptions o;
      o.address = "127.0.0." + std::to_string(10 + r);
      rank.provider = make_provider("soft", o);
      // One completion for every WR any QP may have outstanding, as the agent sizes it.
      const auto sends = send_depths(*plan, r, config.scaling);
      const auto receives = receive_depths(*plan, r, config.scaling);
      std::uint64_t cq_depth = 0;
      for (std::size_t p = 0; p < sends.size(); ++p)
        cq_depth += std::uint64_t{config.scaling.qps} * (sends[p] + receives[p]);
      rank.cq = rank.provider->create_cq(
          static_cast<std::uint32_t>(std::max<std::uint64_t>(cq_depth, 64)));
      if (r == late_rank)
        rank.late_cq = std::make_unique<LatePollingCq>(*rank.cq, std::chrono::milliseconds(3));
      rank.region = rank.provider->register_memory(plan->region_bytes());
      std::memset(rank.region.data, 0, rank.region.length);
      if (production_inputs) {
        fill_inputs(*plan, r, {rank.region.data, rank.region.length});
        continue;
      }
      for (const auto& in : plan->inputs(r))
        for (std::uint64_t i = 0; i < in.bytes; ++i)
          rank.region.data[in.offset + i] = std::byte{input_byte(r, in.offset + i)};
    }
    // QP q of a's connection to b talks to QP q of b's connection to a.
    std::vector<std::vector<std::vector<QueuePair*>>> qp_to(
        static_cast<std::size_t>(n), std::vector<std::vector<QueuePair*>>(n));
    for (int r = 0; r < n; ++r) {
      Rank& rank = ranks[static_cast<std::size_t>(r)];
      std::vector<int> peers;
      plan->peers(r, peers);
      const auto ports = udp_source_ports(7, r, peers.size() * config.scaling.qps);
      const auto sends = send_depths(*plan, r, config.scaling);
      const auto receives = receive_depths(*plan, r, config.scaling);
      QpOptions qo;
      std::size_t next_port = 0;
      for (std::size_t i = 0; i < peers.size(); ++i) {
        const int p = peers[i];
        qo.max_send_wr = sends[i];
        qo.max_recv_wr = receives[i];
        PeerConnection c;
        c.peer = p;
        for (std::uint32_t q = 0; q < config.scaling.qps; ++q) {
          qo.udp_sport = ports[next_port++];
          rank.qps.push_back(rank.provider->create_qp(*rank.cq, qo));
          c.qps.push_back(rank.qps.back().get());
          qp_to[r][p].push_back(rank.qps.back().get());
        }
        rank.connections.push_back(c);
      }
    }
    for (int r = 0; r < n; ++r)
      for (auto& c : ranks[static_cast<std::size_t>(r)].connections) {
        const Rank& peer = ranks[static_cast<std::size_t>(c.peer)];
        c.remote_address = peer.region.remote_address;
        c.rkey = peer.region.rkey;
        for (std::size_t q = 0; q < c.qps.size(); ++q)
          c.qps[q]->connect(qp_to[c.peer][r][q]->local_endpoint());
      }
    for (int r = 0; r < n; ++r) {
      Rank& rank = ranks[static_cast<std::size_t>(r)];
      rank.runner = std::make_unique<CollectiveRunner>(
          *plan, r, config, rank.late_cq ? *rank.late_cq : *rank.cq, rank.region, rank.connections);
      rank.runner->prepare();
    }
  }

  // A soft QP is a UDP socket: thousands of QPs per connection in one process need the soft
  // descriptor limit raised toward the hard one, as the agent raises its own.
  void make_room_for_sockets(int n, std::uint32_t qps) {
    std::uint64_t sockets = 64;
    std::vector<int> peers;
    for (int r = 0; r < n; ++r) {
      plan->peers(r, peers);
      sockets += peers.size() * qps + 2;
    }
    rlimit l{};
    if (::getrlimit(RLIMIT_NOFILE, &l) != 0 || l.rlim_cur == RLIM_INFINITY || l.rlim_cur >= sockets)
      return;
    l.rlim_cur = l.rlim_max == RLIM_INFINITY ? sockets : std::min<rlim_t>(l.rlim_max, sockets);
    ::setrlimit(RLIMIT_NOFILE, &l);
  }

  // `progress`: one per rank, each rank's own (as each agent has its own), or none.
  void run(const CollectiveRun& length, std::vector<LiveProgress>* progress = nullptr) {
    std::atomic<bool> stop{false};
    std::vector<std::thread> threads;
    for (std::size_t r = 0; r < ranks.size(); ++r)
      threads.emplace_back([&, r] {
        CollectiveRun mine = length;
        if (progress != nullptr) mine.progress = &(*progress)[r];
        ranks[r].result = ranks[r].runner->run(mine, stop);
      });
    for (auto& t : threads) t.join();
  }

  // byte i of rank r's region, for expect_outputs
  struct View {
    const Job& job;
    struct Row {
      const MemoryRegion& region;
      std::uint8_t operator[](std::uint64_t i) const {
        return static_cast<std::uint8_t>(region.data[i]);
      }
    };
    Row operator[](int r) const { return {job.ranks[static_cast<std::size_t>(r)].region}; }
  };
};

}  // namespace rocehil::traffic
