// The schedule resolves steps on demand into a few slots: whatever order the executor asks for
// them in, each must be the plan's step with its transfers on the right connections.
#include "collective_schedule.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>

#include "rocehil/common/error.hpp"

namespace rocehil::traffic {
namespace {

// One connection per peer, in descending peer order so that connection numbers and peer
// numbers differ.
std::vector<PeerConnection> connections_of(const CollectivePlan& plan, int rank) {
  std::vector<int> peers;
  plan.peers(rank, peers);
  std::vector<PeerConnection> out;
  for (auto it = peers.rbegin(); it != peers.rend(); ++it) out.push_back({.peer = *it, .qps = {}});
  return out;
}

std::uint32_t connection_to(const std::vector<PeerConnection>& connections, int peer) {
  for (std::uint32_t c = 0; c < connections.size(); ++c)
    if (connections[c].peer == peer) return c;
  ADD_FAILURE() << "no connection to rank " << peer;
  return 0;
}

void expect_same(const std::vector<Transfer>& want, const std::vector<ScheduledTransfer>& got,
                 const std::vector<PeerConnection>& connections) {
  ASSERT_EQ(want.size(), got.size());
  for (const auto& w : want) {
    const auto it = std::find_if(got.begin(), got.end(), [&](const ScheduledTransfer& g) {
      return g.transfer.peer == w.peer && g.transfer.src_offset == w.src_offset &&
             g.transfer.dst_offset == w.dst_offset && g.transfer.bytes == w.bytes &&
             g.transfer.reduce == w.reduce && g.transfer.reduce_offset == w.reduce_offset;
    });
    ASSERT_NE(it, got.end()) << "transfer with rank " << w.peer << " missing";
    EXPECT_EQ(it->connection, connection_to(connections, w.peer));
  }
}

TEST(CollectiveSchedule, EveryStepIsThePlansInAnyOrderOfAsking) {
  const QpScaling scaling{3, QpStrategy::split};
  for (const PlanOptions& options :
       {PlanOptions{.pattern = Pattern::ring_allreduce, .ranks = 12, .bytes = 100'000},
        PlanOptions{.pattern = Pattern::alltoall, .ranks = 6, .bytes = 60'000},
        PlanOptions{.pattern = Pattern::pairwise, .ranks = 5, .bytes = 8'192},
        PlanOptions{.pattern = Pattern::tree_allreduce, .ranks = 7, .bytes = 70'000, .pipeline = 3},
        PlanOptions{.pattern = Pattern::hierarchical_allreduce,
        .ranks = 8,
        .bytes = 64'000,
        .ranks_per_host = 4}}) {
    const auto plan = make_plan(options);
    for (const int rank : {0, plan->ranks() / 2, plan->ranks() - 1}) {
      SCOPED_TRACE(fmt::format("{} rank {}", to_string(plan->pattern()), rank));
      const auto connections = connections_of(*plan, rank);
      CollectiveSchedule schedule(*plan, rank, scaling, connections);
      ASSERT_EQ(schedule.steps(), static_cast<std::uint32_t>(plan->steps(rank)));

      // In order, backwards, and shuffled twice: slots are filled, kept and replaced.
      std::vector<std::uint32_t> order(schedule.steps());
      std::iota(order.begin(), order.end(), 0u);
      std::vector<std::uint32_t> asks = order;
      asks.insert(asks.end(), order.rbegin(), order.rend());
      std::mt19937 random(7);
      for (int round = 0; round < 2; ++round) {
        std::shuffle(order.begin(), order.end(), random);
        asks.insert(asks.end(), order.begin(), order.end());
      }
      std::uint64_t sent = 0, received = 0;
      Step want;
      for (std::size_t n = 0; n < asks.size(); ++n) {
        const std::uint32_t i = asks[n];
        plan->step(rank, static_cast<int>(i), want);
        const StepSchedule& got = schedule.at(i);
        EXPECT_EQ(got.after, want.after) << "step " << i;
        expect_same(want.sends, got.sends, connections);
        expect_same(want.receives, got.receives, connections);
        EXPECT_TRUE(std::is_sorted(
            got.receives.begin(), got.receives.end(),
            [](const auto& a, const auto& b) { return a.connection < b.connection; }));
        std::uint64_t shares = 0;
        for (const auto& t : want.receives) shares += share_count(scaling, t.bytes);
        EXPECT_EQ(got.arrivals_needed, shares) << "step " << i;
        if (n < schedule.steps()) {  // the first, in-order pass
          for (const auto& t : want.sends) sent += t.bytes;
          for (const auto& t : want.receives) received += t.bytes;
        }
      }
      EXPECT_EQ(schedule.send_bytes(), sent);
      EXPECT_EQ(schedule.receive_bytes(), received);
    }
  }
}

TEST(CollectiveSchedule, APeerWithoutAConnectionIsNamed) {
  const auto plan = make_plan({.pattern = Pattern::ring_allreduce, .ranks = 4, .bytes = 4096});
  auto connections = connections_of(*plan, 0);
  connections.pop_back();  // keeps rank 3, drops rank 1
  try {
    CollectiveSchedule schedule(*plan, 0, {1, QpStrategy::split}, connections);
    FAIL() << "a ring rank without its right-hand neighbour was accepted";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "allreduce rank 0 exchanges with rank 1 but has no connection to it");
  }
}

}  // namespace
}  // namespace rocehil::traffic
