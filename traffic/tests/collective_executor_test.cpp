// The collective executor on the soft provider: every rank in its own thread with its own
// provider on its own loopback address, as ranks on separate hosts run it.
#include "rocehil/traffic/collective_executor.hpp"

#include <gtest/gtest.h>

#include <algorithm>
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

TEST(CollectiveExecutor, EachRanksProgressCountsTheBytesItReceivedAsTheyArrive) {
  // The agent samples received_bytes for the rank's timeline: with no warm-up it ends at the
  // bytes the rank's iterations received, share by share (round robin over 3 QPs splits nothing,
  // split over 3 QPs cuts each transfer in three), and bytes at what it sent.
  for (const QpScaling scaling : {QpScaling{3, QpStrategy::split}, {3, QpStrategy::round_robin}}) {
    const PlanOptions o{.pattern = Pattern::alltoall, .ranks = 4, .bytes = 3 * 65536 + 12};
    Job job(o, {.scaling = scaling});
    std::vector<LiveProgress> progress(job.ranks.size());
    job.run({.warmup_iterations = 0, .iterations = 5}, &progress);
    for (std::size_t r = 0; r < job.ranks.size(); ++r) {
      const CollectiveResult& result = job.ranks[r].result;
      ASSERT_EQ(result.errors, 0u) << result.first_error;
      EXPECT_GT(result.bytes_received, 0u);
      EXPECT_EQ(progress[r].received_bytes.load(), result.bytes_received) << "rank " << r;
      EXPECT_EQ(progress[r].bytes.load(), result.bytes_sent) << "rank " << r;
      EXPECT_EQ(progress[r].messages.load(), 5u);
    }
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

TEST(CollectiveExecutor, MoreThan256QpsPerConnectionSplitEveryTransferAndReduceItRight) {
  // Share indices past 255 need the immediate's wider share field: a share read back as its low
  // 8 bits would be reduced at another share's offset and the XOR check below would fail.
  const std::vector<ExecutorCase> cases = {
      {Pattern::ring_allreduce, 2, 1, {257, QpStrategy::split}},
      {Pattern::ring_allreduce, 4, 1, {1024, QpStrategy::split}},
      {Pattern::ring_allreduce, 2, 1, {4096, QpStrategy::split}},
      {Pattern::ring_reduce_scatter, 3, 1, {600, QpStrategy::split}},
  };
  for (const ExecutorCase& c : cases) {
    SCOPED_TRACE(std::string(to_string(c.pattern)) + " n=" + std::to_string(c.ranks) +
                 " qps=" + std::to_string(c.scaling.qps));
    const PlanOptions o{.pattern = c.pattern, .ranks = c.ranks, .bytes = 100003};
    Job job(o, {.scaling = c.scaling});
    job.run({.warmup_iterations = 0, .iterations = 1});
    for (int r = 0; r < c.ranks; ++r) {
      const CollectiveResult& result = job.ranks[static_cast<std::size_t>(r)].result;
      ASSERT_EQ(result.errors, 0u) << result.first_error;
      EXPECT_EQ(result.iterations, 1u);
      std::vector<int> peers;
      job.plan->peers(r, peers);
      ASSERT_EQ(result.per_qp.size(), peers.size() * c.scaling.qps);
      // A ring sends only to the next rank, every chunk of it (> qps bytes) in qps shares: each
      // of that connection's QPs carries one WR per chunk, and together all the bytes.
      const int next = (r + 1) % c.ranks;
      const auto at = static_cast<std::size_t>(std::lower_bound(peers.begin(), peers.end(), next) -
                                               peers.begin());
      std::uint64_t bytes = 0;
      for (std::uint32_t q = 0; q < c.scaling.qps; ++q) {
        const QpBwResult& qp = result.per_qp[at * c.scaling.qps + q];
        EXPECT_EQ(qp.messages, static_cast<std::uint64_t>(job.plan->steps(r))) << "QP " << q;
        bytes += qp.bytes;
      }
      EXPECT_EQ(bytes, result.bytes_sent);
    }
    expect_outputs(o, Job::View{job});
  }
}

TEST(CollectiveExecutor, RoundRobinTakesQpsPast256InTurn) {
  // A 4-rank ring sends 6 transfers an iteration; 60 iterations are 360 on 300 QPs, each QP in
  // turn: QPs 0..59 carry two, the rest one. The first iteration runs alone, so that its XOR
  // result can be checked (a second one reduces the first's output again).
  const PlanOptions o{.pattern = Pattern::ring_allreduce, .ranks = 4, .bytes = 4096};
  const QpScaling scaling{300, QpStrategy::round_robin};
  Job job(o, {.scaling = scaling});
  job.run({.warmup_iterations = 0, .iterations = 1});
  expect_outputs(o, Job::View{job});
  std::vector<std::vector<std::uint64_t>> messages(o.ranks);
  for (int r = 0; r < o.ranks; ++r)
    for (const auto& q : job.ranks[static_cast<std::size_t>(r)].result.per_qp)
      messages[static_cast<std::size_t>(r)].push_back(q.messages);
  job.run({.warmup_iterations = 0, .iterations = 59});
  for (int r = 0; r < o.ranks; ++r) {
    const CollectiveResult& result = job.ranks[static_cast<std::size_t>(r)].result;
    ASSERT_EQ(result.errors, 0u) << result.first_error;
    EXPECT_EQ(result.iterations, 59u);
    std::vector<int> peers;
    job.plan->peers(r, peers);
    const int next = (r + 1) % o.ranks;
    const auto at = static_cast<std::size_t>(std::lower_bound(peers.begin(), peers.end(), next) -
                                             peers.begin());
    for (std::uint32_t q = 0; q < scaling.qps; ++q) {
      const std::size_t i = at * scaling.qps + q;
      EXPECT_EQ(messages[static_cast<std::size_t>(r)][i] + result.per_qp[i].messages,
                q < 60 ? 2u : 1u)
          << "rank " << r << " QP " << q;
    }
  }
}

TEST(CollectiveExecutor, APlanWithMoreStepsThanTheImmediateTellsApartIsRefused) {
  // A ring of 140000 ranks has 2 x 139999 steps an iteration: more than the 2^18 a 16384-QP
  // immediate leaves for steps, fewer than the 2^24 of the 8-bit share field.
  const auto plan =
      make_plan({.pattern = Pattern::ring_allgather, .ranks = 140000, .bytes = 140000});
  ASSERT_EQ(plan->steps(0), 139999);  // allgather: N - 1 steps
  const auto reduce =
      make_plan({.pattern = Pattern::ring_allreduce, .ranks = 140000, .bytes = 140000});
  ProviderOptions po;
  po.address = "127.0.0.31";
  auto provider = make_provider("soft", po);
  auto cq = provider->create_cq(64);
  const MemoryRegion region = provider->register_memory(reduce->region_bytes());
  const auto error_of = [&](const CollectivePlan& p, std::uint32_t qps) {
    try {
      CollectiveRunner runner(p, 0, {.scaling = {qps, QpStrategy::split}}, *cq, region, {});
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_EQ(error_of(*reduce, 16384),
            "allreduce of 140000 ranks: rank 0 has 279998 steps per iteration, and with 16384 "
            "QPs per connection the RDMA immediate tells 262144 apart (14 bits of its 32 name "
            "the share): use fewer ranks or qps, or a smaller pipeline");
  // The same plan with 256 QPs, and fewer steps with 16384, pass that check and stop at the
  // next one: there are no connections.
  EXPECT_NE(error_of(*reduce, 256).find("has no connection to it"), std::string::npos);
  EXPECT_NE(error_of(*plan, 16384).find("has no connection to it"), std::string::npos);
  EXPECT_NE(error_of(*plan, 16385).find("qps per connection 16385 is outside 1..16384"),
            std::string::npos);
}

TEST(CollectiveExecutor, SendDepthIsAnIterationsSendsOnTheBusiestQp) {
  // A ring rank sends its next rank 2(N-1) = 6 transfers an iteration and its previous rank none.
  const auto ring = make_plan({.pattern = Pattern::ring_allreduce, .ranks = 4, .bytes = 4096});
  EXPECT_EQ(send_depths(*ring, 0, {4096, QpStrategy::split}), (std::vector<std::uint32_t>{6, 1}));
  EXPECT_EQ(send_depths(*ring, 0, {4, QpStrategy::round_robin}),
            (std::vector<std::uint32_t>{2 + 1, 1}));
  // Never more than max_send_depth: a 300-rank ring's 598 transfers still keep 256.
  const auto big = make_plan({.pattern = Pattern::ring_allreduce, .ranks = 300, .bytes = 300});
  EXPECT_EQ(send_depths(*big, 0, {1, QpStrategy::split}),
            (std::vector<std::uint32_t>{max_send_depth, 1}));
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
