// The collective executor on the soft provider: every rank in its own thread with its own
// provider on its own loopback address, as ranks on separate hosts run it.
#include "rocehil/traffic/collective_executor.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#include "collective_expectations.hpp"
#include "collective_job.hpp"
#include "rocehil/common/error.hpp"
#include "rocehil/traffic/collective_data.hpp"
#include "rocehil/traffic/collective_summary.hpp"

namespace rocehil::traffic {
namespace {

struct ExecutorCase {
  Pattern pattern;
  int ranks;
  int per_host;
  QpScaling scaling;
};

TEST(CollectiveExecutor, OneIterationLeavesWhatThePatternDefinesOnEveryRank) {
  const std::vector<ExecutorCase> cases = {
      {Pattern::ring_allreduce, 4, 1, {1, QpStrategy::split}},
      {Pattern::ring_allreduce, 5, 1, {4, QpStrategy::split}},
      {Pattern::ring_allreduce, 4, 1, {3, QpStrategy::round_robin}},
      {Pattern::ring_allgather, 5, 1, {2, QpStrategy::split}},
      {Pattern::ring_reduce_scatter, 4, 1, {2, QpStrategy::round_robin}},
      {Pattern::alltoall, 5, 1, {2, QpStrategy::split}},
      {Pattern::broadcast, 4, 1, {1, QpStrategy::split}},
      {Pattern::tree_allreduce, 5, 1, {2, QpStrategy::split}},
      {Pattern::hierarchical_allreduce, 6, 2, {2, QpStrategy::round_robin}},
  };
  for (const ExecutorCase& c : cases) {
    SCOPED_TRACE(std::string(to_string(c.pattern)) + " n=" + std::to_string(c.ranks) + " qps=" +
                 std::to_string(c.scaling.qps) + " " + std::string(to_string(c.scaling.strategy)));
    const PlanOptions o{.pattern = c.pattern,
                        .ranks = c.ranks,
                        .bytes = 100003,
                        .ranks_per_host = c.per_host,
                        .pipeline = 4};
    Job job(o, {.scaling = c.scaling});
    job.run({.warmup_iterations = 0, .iterations = 1});
    for (const auto& rank : job.ranks) {
      ASSERT_EQ(rank.result.errors, 0u) << rank.result.first_error;
      EXPECT_EQ(rank.result.iterations, 1u);
    }
    expect_outputs(o, Job::View{job});
  }
}

TEST(CollectiveExecutor, TheControllersPredictedCrcsMatchRealRuns) {
  for (const Pattern p : all_patterns()) {
    SCOPED_TRACE(std::string(to_string(p)));
    const PlanOptions o{
        .pattern = p, .ranks = 5, .bytes = 77777, .ranks_per_host = 1, .pipeline = 3};
    Job job(o, {.scaling = {3, QpStrategy::split}}, true);
    job.run({.warmup_iterations = 0, .iterations = 1});
    const auto expected = expected_output_crc32s(*job.plan);
    for (int r = 0; r < o.ranks; ++r) {
      const Rank& rank = job.ranks[static_cast<std::size_t>(r)];
      ASSERT_EQ(rank.result.errors, 0u) << rank.result.first_error;
      if (!expected[static_cast<std::size_t>(r)]) continue;
      EXPECT_EQ(output_crc32(*job.plan, r, {rank.region.data, rank.region.length}),
                *expected[static_cast<std::size_t>(r)])
          << "rank " << r;
    }
  }
}

TEST(CollectiveExecutor, IterationsCountBytesPerQpAndWaits) {
  const PlanOptions o{.pattern = Pattern::ring_allreduce, .ranks = 4, .bytes = 1 << 18};
  const QpScaling scaling{4, QpStrategy::split};
  Job job(o, {.scaling = scaling});
  // A verified iteration first, then the measured run on the same connections, as the agent
  // runs them.
  job.run({.warmup_iterations = 0, .iterations = 1});
  for (const auto& rank : job.ranks) ASSERT_EQ(rank.result.iterations, 1u);
  job.run({.warmup_iterations = 2, .iterations = 8});
  for (const auto& rank : job.ranks) {
    const CollectiveResult& r = rank.result;
    ASSERT_EQ(r.errors, 0u) << r.first_error;
    EXPECT_EQ(r.iterations, 8u);
    ASSERT_EQ(r.iteration_end_ns.size(), 8u);
    EXPECT_GT(r.iteration_end_ns.front(), r.start_ns);
    for (std::size_t i = 1; i < r.iteration_end_ns.size(); ++i)
      EXPECT_GE(r.iteration_end_ns[i], r.iteration_end_ns[i - 1]);
    // A ring rank sends 2(N-1) chunks of N per iteration: 2(N-1)/N of the message.
    EXPECT_EQ(r.bytes_sent, 8u * 2 * 3 * (o.bytes / 4));
    EXPECT_EQ(r.bytes_received, r.bytes_sent);
    ASSERT_EQ(r.per_qp.size(), 2u * 4);  // 2 peers x 4 QPs
    std::uint64_t to_next = 0, to_prev = 0;
    for (std::size_t q = 0; q < r.per_qp.size(); ++q)
      (q < 4 ? to_prev : to_next) += r.per_qp[q].bytes;
    // The ring sends only to the next rank; split spreads it evenly over that connection's QPs.
    EXPECT_EQ(to_next + to_prev, r.bytes_sent);
    EXPECT_TRUE(to_next == 0 || to_prev == 0);
    for (const auto& q : r.per_qp)
      if (q.bytes > 0) {
        EXPECT_EQ(q.bytes, r.bytes_sent / 4);
        EXPECT_EQ(q.counters.retransmitted_packets, 0u);
      }
    EXPECT_EQ(r.wait_ns.size(), 6u);
  }
}

TEST(CollectiveExecutor, EveryPatternRunsIterationsBackToBack) {
  // No barrier between iterations: a broadcast root or an incast sender runs ahead, and the
  // receive depth must absorb it without an error.
  for (const Pattern p : all_patterns()) {
    SCOPED_TRACE(std::string(to_string(p)));
    const PlanOptions o{
        .pattern = p, .ranks = 6, .bytes = 65536, .ranks_per_host = 2, .pipeline = 4};
    Job job(o, {.scaling = {2, QpStrategy::round_robin}});
    job.run({.warmup_iterations = 3, .iterations = 12});
    std::uint64_t sent = 0, received = 0;
    for (const auto& rank : job.ranks) {
      ASSERT_EQ(rank.result.errors, 0u) << rank.result.first_error;
      EXPECT_EQ(rank.result.iterations, 12u);
      sent += rank.result.bytes_sent;
      received += rank.result.bytes_received;
      std::uint64_t per_qp = 0;
      for (const auto& q : rank.result.per_qp) per_qp += q.bytes;
      EXPECT_EQ(per_qp, rank.result.bytes_sent);
    }
    EXPECT_EQ(sent, received);
    EXPECT_GT(sent, 0u);
  }
}

TEST(CollectiveExecutor, ARankThatPollsLateStillTimesEveryPairwiseExchange) {
  // Rank 3 sleeps before each poll. Its partner of the first round is then ahead: the partner's
  // token is in before rank 3 posts its own, so rank 3 posts its token and its data together and
  // sees both steps end in one poll. The data step's time must still be the exchange's, not 0,
  // or the matrix shows a dead pair that is not.
  const PlanOptions o{.pattern = Pattern::pairwise, .ranks = 4, .bytes = 65536};
  Job job(o, {.scaling = {2, QpStrategy::round_robin}}, false, 3);
  job.run({.warmup_iterations = 1, .iterations = 4});
  std::vector<RankTiming> timings;
  Step s;
  for (int r = 0; r < o.ranks; ++r) {
    const CollectiveResult& result = job.ranks[static_cast<std::size_t>(r)].result;
    ASSERT_EQ(result.errors, 0u) << result.first_error;
    ASSERT_EQ(result.step_ns.size(), static_cast<std::size_t>(job.plan->steps(r)));
    for (int i = 1; i < job.plan->steps(r); i += 2) {
      job.plan->step(r, i, s);
      EXPECT_GT(result.step_ns[static_cast<std::size_t>(i)], 0u)
          << ::testing::PrintToString(result.step_ns) << " wait "
          << ::testing::PrintToString(result.wait_ns) << " rank " << r << " data step " << i
          << " with rank " << s.sends[0].peer;
    }
    timings.push_back({.start_ns = result.start_ns,
                       .iteration_end_ns = result.iteration_end_ns,
                       .wait_ns = result.wait_ns,
                       .step_ns = result.step_ns,
                       .wait_total_ns = std::nullopt});
  }
  const PairwiseMatrix m = pairwise_matrix(*job.plan, timings, 4, 0.2);
  for (int a = 0; a < o.ranks; ++a)
    for (int b = 0; b < o.ranks; ++b) {
      if (a != b) {
        EXPECT_GT(m.at(a, b), 0) << a << " -> " << b;
      }
    }
}

TEST(CollectiveExecutor, ReceiveDepthCoversTwoIterationsOfTheBusiestQp) {
  // A ring rank gets 2(N-1) = 6 transfers per iteration from its one sender.
  const auto ring = make_plan({.pattern = Pattern::ring_allreduce, .ranks = 4, .bytes = 4096});
  EXPECT_EQ(receive_depth(*ring, 0, {4, QpStrategy::split}), 2 * 6 + 16u);
  EXPECT_EQ(receive_depth(*ring, 0, {4, QpStrategy::round_robin}), 2 * (2 + 1) + 16u);
  // Per peer: rank 0 hears from rank 3 only; its QPs to rank 1 keep the floor.
  EXPECT_EQ(receive_depths(*ring, 0, {4, QpStrategy::split}),
            (std::vector<std::uint32_t>{16u, 2 * 6 + 16u}));
  EXPECT_EQ(receive_depths(*ring, 0, {4, QpStrategy::round_robin}),
            (std::vector<std::uint32_t>{16u, 2 * (2 + 1) + 16u}));
  // Incast's receiver gets one transfer from each sender; a sender gets none.
  const auto incast = make_plan({.pattern = Pattern::incast, .ranks = 9, .bytes = 4096});
  EXPECT_EQ(receive_depth(*incast, 0, {1, QpStrategy::split}), 2 * 1 + 16u);
  EXPECT_EQ(receive_depth(*incast, 3, {1, QpStrategy::split}), 16u);
}

TEST(CollectiveExecutor, BadConnectionsAreRefused) {
  const auto plan = make_plan({.pattern = Pattern::ring_allreduce, .ranks = 4, .bytes = 4096});
  ProviderOptions o;
  o.address = "127.0.0.30";
  auto provider = make_provider("soft", o);
  auto cq = provider->create_cq(64);
  const MemoryRegion region = provider->register_memory(plan->region_bytes());
  try {
    CollectiveRunner runner(*plan, 0, {}, *cq, region, {});
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("has no connection to it"), std::string::npos);
  }
  const MemoryRegion small = provider->register_memory(100);
  EXPECT_THROW(CollectiveRunner(*plan, 0, {}, *cq, small, {}), Error);
}

}  // namespace
}  // namespace rocehil::traffic
