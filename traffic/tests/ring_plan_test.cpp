#include "rocehil/traffic/ring_plan.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <set>
#include <vector>

#include "rocehil/common/error.hpp"

namespace rocehil::traffic {
namespace {

constexpr RingCollective every_ring_collective[] = {
    RingCollective::allreduce, RingCollective::reduce_scatter, RingCollective::allgather};

TEST(RingPlan, StepCountsAndBusbwFactorsAreNcclTests) {
  for (const int n : {2, 3, 5, 8, 13, 64}) {
    EXPECT_EQ(RingPlan(RingCollective::allreduce, n, 1 << 20).steps(), 2 * (n - 1));
    EXPECT_EQ(RingPlan(RingCollective::allgather, n, 1 << 20).steps(), n - 1);
    EXPECT_EQ(RingPlan(RingCollective::reduce_scatter, n, 1 << 20).steps(), n - 1);
  }
  // nccl-tests doc/PERFORMANCE.md: allreduce 2(n-1)/n, allgather and reduce-scatter (n-1)/n.
  EXPECT_DOUBLE_EQ(busbw_factor(RingCollective::allreduce, 8), 1.75);
  EXPECT_DOUBLE_EQ(busbw_factor(RingCollective::allgather, 8), 0.875);
  EXPECT_DOUBLE_EQ(busbw_factor(RingCollective::reduce_scatter, 4), 0.75);
  EXPECT_DOUBLE_EQ(busbw_factor(RingCollective::allreduce, 2), 1.0);
}

TEST(RingPlan, ChunksTileTheMessage) {
  for (const int n : {2, 3, 7, 16})
    for (const std::uint64_t bytes : {0ull, 1ull, 5ull, 1000ull, 1ull << 26}) {
      const RingPlan p(RingCollective::allreduce, n, bytes);
      std::uint64_t next = 0;
      for (int c = 0; c < n; ++c) {
        EXPECT_EQ(p.chunk(c).offset, next);
        next += p.chunk(c).bytes;
        EXPECT_LE(p.chunk(0).bytes - p.chunk(c).bytes, 1u);
      }
      EXPECT_EQ(next, bytes);
    }
}

// Every send is met by the matching receive on the next rank at the same step, and the data
// model of each rank's chunks ends where the collective says it must.
void check_data_flow(RingCollective c, int n) {
  const std::uint64_t bytes = 1000003;
  const RingPlan p(c, n, bytes);
  const std::uint64_t everyone = n == 64 ? ~0ull : (1ull << n) - 1;
  // contributions[r][chunk]: which ranks' data rank r's copy of the chunk holds (0: none yet).
  std::vector<std::vector<std::uint64_t>> held(n, std::vector<std::uint64_t>(n, 0));
  for (int r = 0; r < n; ++r)
    for (int k = 0; k < n; ++k)
      if (c != RingCollective::allgather || k == r) held[r][k] = 1ull << r;
  std::vector<std::uint64_t> sent(n, 0);
  std::vector<std::set<int>> sent_chunks(n);
  for (int t = 0; t < p.steps(); ++t) {
    auto before = held;
    for (int r = 0; r < n; ++r) {
      const RingStep s = p.step(r, t);
      const RingStep peer = p.step(s.send_to, t);
      ASSERT_EQ(peer.receive_from, r);
      ASSERT_EQ(peer.receive.index, s.send.index) << "rank " << r << " step " << t;
      ASSERT_EQ(peer.receive.bytes, s.send.bytes);
      ASSERT_NE(before[r][s.send.index], 0u) << "rank " << r << " sends a chunk it has not got";
      std::uint64_t& into = held[s.send_to][s.send.index];
      into = peer.reduce ? (into | before[r][s.send.index]) : before[r][s.send.index];
      sent[r] += s.send.bytes;
      if (c != RingCollective::allreduce) sent_chunks[r].insert(s.send.index);
    }
  }
  for (int r = 0; r < n; ++r) {
    if (c == RingCollective::reduce_scatter) {
      EXPECT_EQ(held[r][r], everyone) << "rank " << r;
    } else if (c == RingCollective::allgather) {
      for (int k = 0; k < n; ++k)
        EXPECT_EQ(held[r][k], 1ull << k) << "rank " << r << " chunk " << k;
    } else {
      for (int k = 0; k < n; ++k) EXPECT_EQ(held[r][k], everyone) << "rank " << r << " chunk " << k;
    }
    // Each rank sends each chunk it sends once per phase: n-1 distinct chunks.
    if (c != RingCollective::allreduce) {
      EXPECT_EQ(sent_chunks[r].size(), static_cast<std::size_t>(n - 1));
    }
    const std::uint64_t per_phase =
        bytes - p.chunk(c == RingCollective::allgather ? (r + 1) % n : r).bytes;
    if (c == RingCollective::allreduce) {
      EXPECT_NEAR(static_cast<double>(sent[r]), 2.0 * (n - 1) / n * bytes, 2.0 * n);
    } else {
      EXPECT_EQ(sent[r], per_phase) << "rank " << r;
    }
  }
}

TEST(RingPlan, DataReachesEveryRankExactlyAsTheCollectiveSays) {
  for (const RingCollective c : every_ring_collective)
    for (const int n : {2, 3, 4, 5, 7, 8, 13, 64}) {
      SCOPED_TRACE(std::string(to_string(c)) + " n=" + std::to_string(n));
      check_data_flow(c, n);
    }
}

TEST(RingPlan, LazyForAWholeSite) {
  const RingPlan p(RingCollective::allreduce, 32768, std::uint64_t{1} << 30);
  const RingStep last = p.step(32767, p.steps() - 1);
  EXPECT_EQ(last.send_to, 0);
  EXPECT_EQ(last.receive_from, 32766);
  EXPECT_FALSE(last.reduce);
  EXPECT_TRUE(p.step(0, 32766).reduce);
  EXPECT_FALSE(p.step(0, 32767).reduce);
}

TEST(RingPlan, BadInput) {
  EXPECT_THROW(RingPlan(RingCollective::allreduce, 1, 100), Error);
  const RingPlan p(RingCollective::allgather, 4, 100);
  EXPECT_THROW(p.step(4, 0), Error);
  EXPECT_THROW(p.step(0, 3), Error);
  EXPECT_EQ(ring_collective_from_name("reduce_scatter"), RingCollective::reduce_scatter);
  EXPECT_FALSE(ring_collective_from_name("alltoall").has_value());
}

}  // namespace
}  // namespace rocehil::traffic
