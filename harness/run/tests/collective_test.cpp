// The controller's pieces of a collective that need no agent: who connects to whom, the JSON
// and the blame.

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "collective_samples.hpp"
#include "rocehil/common/error.hpp"
#include "rocehil/run/collective_run.hpp"
#include "rocehil/run/result_json.hpp"

namespace rocehil::run {
namespace {

using samples::sample_case;

// Endpoint i of rank r carries qpn r * 100 + i, so a pick can be read back.
std::vector<std::vector<agent::PeerEndpoint>> fake_endpoints(const traffic::CollectivePlan& plan,
                                                             std::uint32_t qps) {
  std::vector<std::vector<agent::PeerEndpoint>> out(static_cast<std::size_t>(plan.ranks()));
  std::vector<int> peers;
  for (int r = 0; r < plan.ranks(); ++r) {
    plan.peers(r, peers);
    for (std::size_t i = 0; i < peers.size() * qps; ++i) {
      agent::PeerEndpoint e;
      e.endpoint.qpn = static_cast<std::uint32_t>(r * 100 + i);
      out[static_cast<std::size_t>(r)].push_back(e);
    }
  }
  return out;
}

TEST(CollectivePeers, EachRankGetsThePeersQpsThatFaceIt) {
  const auto plan = traffic::make_plan({.pattern = traffic::Pattern::alltoall, .ranks = 4});
  const auto endpoints = fake_endpoints(*plan, 2);
  // Rank 1's peers are 0, 2, 3. Rank 0's peers are 1, 2, 3: rank 1 is its first, QPs 0-1.
  // Rank 2's peers are 0, 1, 3: rank 1 second, QPs 2-3. Rank 3's: 0, 1, 2: QPs 2-3.
  const auto picked = peers_for(*plan, 1, 2, endpoints);
  std::vector<std::uint32_t> qpns;
  for (const auto& p : picked) qpns.push_back(p.endpoint.qpn);
  EXPECT_EQ(qpns, (std::vector<std::uint32_t>{0, 1, 202, 203, 302, 303}));

  auto short_reply = endpoints;
  short_reply[3].pop_back();
  EXPECT_THROW(peers_for(*plan, 1, 2, short_reply), Error);
}

TEST(CollectiveQps, ARankWithMorePeersTimesQpsThanAnAgentTakesIsRefusedBeforeSetup) {
  const auto error_of = [](traffic::Pattern pattern, int ranks, std::uint32_t qps) {
    CollectiveJob job;
    job.plan = {.pattern = pattern, .ranks = ranks, .bytes = 1 << 20};
    job.scaling = {.qps = qps, .strategy = traffic::QpStrategy::split};
    const std::atomic<bool> interrupt{false};
    try {
      run_collective_case({}, {}, job, {}, interrupt);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  // 4 peers x 8192 QPs: twice what an agent takes.
  EXPECT_EQ(error_of(traffic::Pattern::alltoall, 5, 8192),
            "alltoall over 5 ranks: rank 0 talks to 4 peers x 8192 qps per connection = 32768 "
            "QPs, more than an agent takes (16384 in all): lower qps to 4096 or less, or select "
            "fewer hosts");
  // A ring rank has 2 peers once there are 3 ranks; with 2 ranks, 1, which takes all 16384.
  EXPECT_EQ(error_of(traffic::Pattern::ring_allreduce, 3, 16384),
            "allreduce over 3 ranks: rank 0 talks to 2 peers x 16384 qps per connection = 32768 "
            "QPs, more than an agent takes (16384 in all): lower qps to 8192 or less, or select "
            "fewer hosts");
  // Those that fit go on to the agents (none here).
  EXPECT_EQ(error_of(traffic::Pattern::ring_allreduce, 2, 16384),
            "0 agents and 0 setups for 2 ranks");
  EXPECT_EQ(error_of(traffic::Pattern::ring_allreduce, 1000, 8192),
            "0 agents and 0 setups for 1000 ranks");
  EXPECT_EQ(error_of(traffic::Pattern::alltoall, 5, 4096), "0 agents and 0 setups for 5 ranks");
}

TEST(CollectiveJson, CarriesTheSummaryPeersAndCounters) {
  const CollectiveCase c = sample_case();
  const auto j = collective_json(
      {{"h1", "nic0", "198.18.1.11"}, {"h2", "nic0", "198.18.1.12"}, {"h3", "nic0", "198.18.2.11"}},
      "soft", "packed", {c});
  EXPECT_EQ(j["schema_version"], 1);
  EXPECT_EQ(j["pattern"], "allreduce");
  EXPECT_DOUBLE_EQ(j["busbw_factor"].get<double>(), 4.0 / 3);
  const auto& e = j["cases"][0];
  EXPECT_EQ(e["wrong"], 1);
  EXPECT_EQ(e["straggler"], 1);
  EXPECT_EQ(e["transport"]["retransmitted_packets"], 7);
  // A ring rank's QPs face its peers in ascending rank, 2 each: rank 0 talks to 1 and 2.
  const auto& qps = e["per_rank"][0]["per_qp"];
  ASSERT_EQ(qps.size(), 4u);
  EXPECT_EQ(qps[0]["peer"], 1);
  EXPECT_EQ(qps[3]["peer"], 2);
  // The ring sends to the next rank only: the QPs to the previous one carry nothing by design.
  EXPECT_EQ(qps[0]["sends"], true);
  EXPECT_EQ(qps[1]["sends"], true);
  EXPECT_EQ(qps[2]["sends"], false);
  EXPECT_EQ(qps[3]["sends"], false);
  EXPECT_EQ(e["per_rank"][2]["per_qp"][0]["sends"], true);  // rank 2's next is rank 0
  EXPECT_EQ(e["per_rank"][0]["wait_ms_per_step"], nlohmann::json::array({1.0, 2.0}));
  EXPECT_DOUBLE_EQ(e["per_rank"][0]["wait_ms"].get<double>(), 3.0);
  EXPECT_EQ(e["per_rank"][0]["longest_wait"], (nlohmann::json{{"step", 1}, {"ms", 2.0}}));
}

TEST(CollectiveJson, ARankOfThousandsOfStepsKeepsItsWaitsSumAndLongestNotEachStep) {
  CollectiveCase c = sample_case();
  for (std::size_t steps : {max_steps_in_detail, max_steps_in_detail + 1}) {
    std::vector<std::uint64_t> waits(steps, 1000000);  // 1 ms each
    waits[7] = 5000000;
    for (auto& r : c.results) {
      r.collective->wait_ns = waits;
      r.collective->step_ns = waits;
      agent::fold_step_waits(*r.collective, false);  // as the agent sends it
    }
    const auto j = collective_json({{"h1", "nic0", "198.18.1.11"},
                                    {"h2", "nic0", "198.18.1.12"},
                                    {"h3", "nic0", "198.18.2.11"}},
                                   "soft", "packed", {c});
    const auto& rank = j["cases"][0]["per_rank"][1];
    EXPECT_DOUBLE_EQ(rank["wait_ms"].get<double>(), static_cast<double>(steps) + 4.0) << steps;
    EXPECT_EQ(rank["longest_wait"], (nlohmann::json{{"step", 7}, {"ms", 5.0}})) << steps;
    if (steps <= max_steps_in_detail) {
      ASSERT_TRUE(rank.contains("wait_ms_per_step"));
      EXPECT_EQ(rank["wait_ms_per_step"].size(), steps);
    } else {
      EXPECT_FALSE(rank.contains("wait_ms_per_step"));  // absent, never an empty list
    }
  }
}

// A ring of 4 with 2 QPs per connection; rank r's QP i has qpn r * 100 + i, and its peers are
// its two neighbours in ascending order (QPs 0-1 face the first, 2-3 the second).
CollectiveCase ring_with_errors(const std::vector<std::pair<int, int>>& failing_qps) {
  CollectiveCase c;
  c.job.plan = {.pattern = traffic::Pattern::ring_allreduce, .ranks = 4, .bytes = 1 << 20};
  c.job.scaling = {.qps = 2, .strategy = traffic::QpStrategy::split};
  c.results.resize(4);
  for (int r = 0; r < 4; ++r) {
    auto& e = c.results[static_cast<std::size_t>(r)];
    e.per_qp.resize(4);
    for (int q = 0; q < 4; ++q)
      e.per_qp[static_cast<std::size_t>(q)].qpn = static_cast<std::uint32_t>(r * 100 + q);
  }
  for (const auto& [rank, qp] : failing_qps) {
    auto& e = c.results[static_cast<std::size_t>(rank)];
    ++e.errors;
    ++c.errors;
    e.first_error = fmt::format("QP {:#x}: retry_exceeded", rank * 100 + qp);
  }
  return c;
}

TEST(CollectiveBlame, TheRankTheFailingQpsPointAtIsBlamed) {
  // Ranks 0 and 2 both fail on their QP to rank 1 (rank 0's peers are 1 and 3; rank 2's, 1
  // and 3): rank 1's link is down.
  EXPECT_EQ(failing_rank(ring_with_errors({{0, 1}, {2, 0}})), 1);
  // One rank failing towards rank 3: a tie of one vote each goes to the far end.
  EXPECT_EQ(failing_rank(ring_with_errors({{0, 3}})), 3);
  // An error that names no QP blames the rank that had it.
  CollectiveCase c = ring_with_errors({{2, 0}});
  c.results[2].first_error = "rank 2 step 1: data from rank 3, which sends nothing then";
  EXPECT_EQ(failing_rank(c), 2);
  EXPECT_EQ(failing_rank(ring_with_errors({})), -1);
}

}  // namespace
}  // namespace rocehil::run

namespace rocehil::run {
namespace {

TEST(CollectiveStart, WaitsTwiceTheConnectRoundWhenThatIsLongerThanConfigured) {
  using namespace std::chrono_literals;
  EXPECT_EQ(start_delay_after(500ms, 100ms), 500ms);     // a few ranks: the configured delay
  EXPECT_EQ(start_delay_after(500ms, 6800ms), 13600ms);  // 3,072 ranks on 2 cores
  EXPECT_EQ(start_delay_after(0ms, 0ms), 0ms);
}

// A collective by duration runs as many iterations as fit, whole, in the time one took.
TEST(CollectiveByDuration, IterationsFitTheDurationAtOneIterationsTime) {
  EXPECT_EQ(iterations_for(3, 0.02), 150u);
  EXPECT_EQ(iterations_for(3, 0.7), 4u);  // 2.8 s: a fifth would pass the duration
  EXPECT_EQ(iterations_for(0.5, 2), 1u);  // slower than the duration: one, never none
  EXPECT_EQ(iterations_for(60, 1e-6), max_timed_iterations);
  EXPECT_EQ(iterations_for(3, 0), 1u);  // no time measured: one
}

}  // namespace
}  // namespace rocehil::run
