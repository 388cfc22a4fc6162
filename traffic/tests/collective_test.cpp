#include "rocehil/traffic/collective.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <deque>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "collective_expectations.hpp"
#include "rocehil/common/error.hpp"
#include "rocehil/traffic/qp_scaling.hpp"

namespace rocehil::traffic {
namespace {

// Runs a plan on N in-memory regions the way an executor may: each rank posts a step's sends
// once its `after` condition holds, and messages in flight are delivered in a random order,
// reading the source when they land. Every send must meet exactly one receive the peer's plan
// expects (same sender, place and length); at the end every receive must have arrived.
struct Simulation {
  // One QP share of a transfer: QP scaling cuts a transfer in shares that travel and land
  // independently, in any order.
  struct Message {
    int from, to;
    int step;  // the sender's; the executor tags data with it, so the receiver's must be the same
    Transfer t;
    std::uint64_t transfer_id;  // the shares of one transfer share it
    std::uint64_t offset, bytes;
  };
  struct Expected {
    int step;
    Transfer t;
    std::uint64_t received = 0;
    bool arrived = false;
  };

  const CollectivePlan& plan;
  std::vector<Bytes> region;
  std::vector<std::vector<Step>> steps;
  std::vector<std::vector<Expected>> expected;  // per rank, all its receives
  std::vector<int> posted;                      // steps whose sends went out, per rank
  std::vector<Message> in_flight;
  QpScaling scaling;
  std::uint64_t next_transfer = 0;
  std::map<std::uint64_t, Expected*> matched;     // transfer id -> the receive it met
  std::vector<std::pair<int, Expected*>> landed;  // written, not yet seen by the receiver
  std::vector<std::string> problems;
  std::map<std::pair<int, int>, std::uint64_t> bytes_between;  // (from, to) -> bytes

  explicit Simulation(const CollectivePlan& p, QpScaling k = {})
      : plan(p),
        region(p.ranks(), Bytes(p.region_bytes(), 0)),
        steps(p.ranks()),
        expected(p.ranks()),
        posted(p.ranks(), 0),
        scaling(k) {
    for (int r = 0; r < p.ranks(); ++r) {
      for (const auto& in : p.inputs(r))
        for (std::uint64_t i = 0; i < in.bytes; ++i)
          region[r][in.offset + i] = input_byte(r, in.offset + i);
      for (int s = 0; s < p.steps(r); ++s) {
        Step step;
        p.step(r, s, step);
        for (const auto& t : step.receives) {
          EXPECT_LE(t.dst_offset + t.bytes, p.region_bytes());
          if (t.reduce) {
            EXPECT_LE(t.reduce_offset + t.bytes, p.region_bytes());
          }
          expected[r].push_back({s, t});
        }
        for (const auto& t : step.sends) EXPECT_LE(t.src_offset + t.bytes, p.region_bytes());
        steps[r].push_back(step);
      }
    }
  }

  bool receives_done(int rank, int through_step) const {
    for (const auto& e : expected[rank])
      if (e.step <= through_step && !e.arrived) return false;
    return true;
  }

  bool may_post(int rank) const {
    const int s = posted[rank];
    if (s >= static_cast<int>(steps[rank].size())) return false;
    switch (steps[rank][s].after) {
      case After::start: return true;
      case After::earlier_receives: return receives_done(rank, s - 1);
      case After::through_this_step: return receives_done(rank, s);
    }
    return false;
  }

  void deliver(const Message& m) {
    Expected* match = nullptr;
    if (const auto it = matched.find(m.transfer_id); it != matched.end()) match = it->second;
    for (auto& e : expected[m.to]) {
      if (match != nullptr) break;
      if (!e.arrived && e.t.peer == m.from && e.step == m.step &&
          e.t.dst_offset == m.t.dst_offset && e.t.bytes == m.t.bytes &&
          e.t.src_offset == m.t.src_offset && e.t.reduce == m.t.reduce &&
          e.t.reduce_offset == m.t.reduce_offset) {
        match = &e;
        matched[m.transfer_id] = match;
        match->t.peer = -1;  // matched: no other transfer may take it
      }
    }
    if (match == nullptr) {
      problems.push_back("rank " + std::to_string(m.from) + " sent " + std::to_string(m.t.bytes) +
                         " bytes to rank " + std::to_string(m.to) + " at " +
                         std::to_string(m.t.dst_offset) + ", which expects nothing there");
      return;
    }
    bytes_between[{m.from, m.to}] += m.bytes;
    auto& dst = region[m.to];
    for (std::uint64_t i = m.offset; i < m.offset + m.bytes; ++i)
      dst[m.t.dst_offset + i] = region[m.from][m.t.src_offset + i];
    match->received += m.bytes;
    if (match->received > match->t.bytes) problems.push_back("a transfer got more than its bytes");
    if (match->received == match->t.bytes) landed.emplace_back(m.to, match);
  }

  // The receiver polls the completion: only now does it reduce, and only now may steps that
  // wait for this receive go on.
  void complete(int rank, Expected& e) {
    auto& dst = region[rank];
    if (e.t.reduce)
      for (std::uint64_t i = 0; i < e.t.bytes; ++i)
        dst[e.t.reduce_offset + i] ^= dst[e.t.dst_offset + i];
    e.arrived = true;
  }

  void run(std::uint64_t seed) {
    std::mt19937_64 random(seed);
    for (;;) {
      std::vector<int> ready;
      for (int r = 0; r < plan.ranks(); ++r)
        if (may_post(r)) ready.push_back(r);
      if (ready.empty() && in_flight.empty() && landed.empty()) break;
      // Post, deliver or complete, at random, so each overtakes the others.
      const auto choice = random() % 3;
      if (!ready.empty() && (choice == 0 || (in_flight.empty() && landed.empty()))) {
        const int r = ready[random() % ready.size()];
        for (const auto& t : steps[r][posted[r]].sends) {
          const std::uint64_t id = next_transfer++;
          for (std::uint32_t i = 0; i < share_count(scaling, t.bytes); ++i) {
            const QpShare sh = share(scaling, id, t.bytes, i);
            in_flight.push_back({r, t.peer, posted[r], t, id, sh.offset, sh.bytes});
          }
        }
        ++posted[r];
      } else if (!landed.empty() && (choice == 1 || in_flight.empty())) {
        const std::size_t i = random() % landed.size();
        const auto [rank, e] = landed[i];
        landed.erase(landed.begin() + static_cast<std::ptrdiff_t>(i));
        complete(rank, *e);
      } else {
        const std::size_t i = random() % in_flight.size();
        const Message m = in_flight[i];
        in_flight.erase(in_flight.begin() + static_cast<std::ptrdiff_t>(i));
        deliver(m);
      }
    }
    for (int r = 0; r < plan.ranks(); ++r) {
      if (posted[r] != static_cast<int>(steps[r].size()))
        problems.push_back("rank " + std::to_string(r) + " stuck before step " +
                           std::to_string(posted[r]));
      for (const auto& e : expected[r])
        if (!e.arrived)
          problems.push_back("rank " + std::to_string(r) + " step " + std::to_string(e.step) +
                             " never got its data from rank " + std::to_string(e.t.peer));
    }
  }
};

// What each pattern must leave behind, from its definition rather than from the planner.
void check_result(const PlanOptions& o, const Simulation& sim) {
  const int n = o.ranks;
  const std::uint64_t b = o.bytes;
  if (has_definite_output(o.pattern)) {
    expect_outputs(o, sim.region);
    return;
  }
  switch (o.pattern) {
    case Pattern::incast:
      for (int r = 1; r < n; ++r) EXPECT_EQ((sim.bytes_between.at({r, 0})), b);
      EXPECT_EQ(sim.bytes_between.size(), static_cast<std::size_t>(n - 1));
      return;
    case Pattern::permutation: {
      std::map<int, int> sender_of;
      for (const auto& [pair, bytes] : sim.bytes_between) {
        EXPECT_NE(pair.first, pair.second);
        EXPECT_EQ(bytes, b);
        EXPECT_TRUE(sender_of.emplace(pair.second, pair.first).second) << "two senders";
      }
      ASSERT_EQ(sender_of.size(), static_cast<std::size_t>(n));
      for (int r = 0; r < n; ++r)
        for (std::uint64_t i = 0; i < b; ++i)
          ASSERT_EQ(sim.region[r][b + i], input_byte(sender_of[r], i));
      return;
    }
    case Pattern::pairwise:
      // Every ordered pair carried the message (and a round's one-byte token) exactly once.
      EXPECT_EQ(sim.bytes_between.size(), static_cast<std::size_t>(n) * (n - 1));
      for (const auto& [pair, bytes] : sim.bytes_between) EXPECT_EQ(bytes, b + 1);
      return;
    default: return;
  }
}

struct PlanCase {
  Pattern pattern;
  int ranks;
  int per_host;
};

std::vector<PlanCase> cases() {
  std::vector<PlanCase> all;
  for (const Pattern p : all_patterns())
    for (const int n : {2, 3, 4, 5, 7, 8, 12, 16}) {
      if (p == Pattern::hierarchical_allreduce) {
        for (const int g : {1, 2, 3, 4})
          if (n % g == 0) all.push_back({p, n, g});
      } else {
        all.push_back({p, n, 1});
      }
    }
  return all;
}

TEST(CollectivePlan, EveryPatternMovesEveryByteOnceAndEndsAsItsDefinitionSays) {
  for (const PlanCase& c : cases())
    for (const std::uint64_t bytes : {1ull, 5ull, 1000ull, 4099ull}) {
      for (const int pipeline : {1, 3}) {
        const PlanOptions o{.pattern = c.pattern,
                            .ranks = c.ranks,
                            .bytes = bytes,
                            .ranks_per_host = c.per_host,
                            .pipeline = pipeline,
                            .seed = 7};
        SCOPED_TRACE(std::string(to_string(c.pattern)) + " n=" + std::to_string(c.ranks) +
                     " g=" + std::to_string(c.per_host) + " bytes=" + std::to_string(bytes) +
                     " pipeline=" + std::to_string(pipeline));
        const auto plan = make_plan(o);
        // One QP, and QP scaling's split over 3 and 8 QPs, each share landing on its own.
        for (const std::uint32_t qps : {1u, 3u, 8u}) {
          Simulation sim(*plan, {.qps = qps, .strategy = QpStrategy::split});
          sim.run(qps);
          ASSERT_TRUE(sim.problems.empty()) << sim.problems.front();
          check_result(o, sim);
        }
      }
    }
}

TEST(CollectivePlan, StepCountsAreTheAlgorithms) {
  for (const int n : {2, 3, 8, 13}) {
    auto steps = [&](Pattern p, int g = 1) {
      return make_plan({.pattern = p, .ranks = n, .bytes = 1 << 20, .ranks_per_host = g})->steps(0);
    };
    EXPECT_EQ(steps(Pattern::ring_allreduce), 2 * (n - 1));
    EXPECT_EQ(steps(Pattern::ring_allgather), n - 1);
    EXPECT_EQ(steps(Pattern::ring_reduce_scatter), n - 1);
    EXPECT_EQ(steps(Pattern::alltoall), n - 1);
    EXPECT_EQ(steps(Pattern::pairwise), 2 * (n % 2 == 0 ? n - 1 : n));  // token + data
    EXPECT_EQ(steps(Pattern::broadcast), 8);
    EXPECT_EQ(steps(Pattern::tree_allreduce), 4 * 8);
    EXPECT_EQ(steps(Pattern::incast), 1);
  }
  // 4 hosts x 2 rails: 1 local step, 2(4-1) rail steps, 1 local step.
  EXPECT_EQ(make_plan({.pattern = Pattern::hierarchical_allreduce, .ranks = 8, .ranks_per_host = 2})
                ->steps(5),
            8);
}

TEST(CollectivePlan, BusbwFactorsAreNcclTests) {
  EXPECT_DOUBLE_EQ(busbw_factor(Pattern::ring_allreduce, 8), 1.75);
  EXPECT_DOUBLE_EQ(busbw_factor(Pattern::tree_allreduce, 8), 1.75);
  EXPECT_DOUBLE_EQ(busbw_factor(Pattern::hierarchical_allreduce, 4), 1.5);
  EXPECT_DOUBLE_EQ(busbw_factor(Pattern::ring_allgather, 8), 0.875);
  EXPECT_DOUBLE_EQ(busbw_factor(Pattern::ring_reduce_scatter, 4), 0.75);
  EXPECT_DOUBLE_EQ(busbw_factor(Pattern::alltoall, 4), 0.75);
  EXPECT_DOUBLE_EQ(busbw_factor(Pattern::broadcast, 16), 1.0);
  EXPECT_DOUBLE_EQ(busbw_factor(Pattern::incast, 5), 4.0);
}

TEST(CollectivePlan, PeersAreTheRanksTheStepsName) {
  for (const PlanCase& c : cases()) {
    const auto plan = make_plan(
        {.pattern = c.pattern, .ranks = c.ranks, .bytes = 4096, .ranks_per_host = c.per_host});
    for (int r = 0; r < c.ranks; ++r) {
      std::vector<int> direct, walked;
      plan->peers(r, direct);
      plan->CollectivePlan::peers(r, walked);
      EXPECT_EQ(direct, walked) << to_string(c.pattern) << " n=" << c.ranks << " rank " << r;
    }
  }
}

TEST(CollectivePlan, PairwiseRoundsNeverPutARankInTwoPairs) {
  for (const int n : {2, 5, 6, 31, 64}) {
    const auto plan = make_plan({.pattern = Pattern::pairwise, .ranks = n, .bytes = 64});
    Step s;
    for (int round = 0; round < plan->steps(0) / 2; ++round) {
      std::vector<int> partner(n, -1);
      int idle = 0;
      for (int r = 0; r < n; ++r) {
        plan->step(r, 2 * round + 1, s);  // the round's data step
        if (s.sends.empty()) {
          ++idle;
          continue;
        }
        partner[r] = s.sends[0].peer;
      }
      EXPECT_EQ(idle, n % 2) << "n=" << n << " round " << round;
      for (int r = 0; r < n; ++r)
        if (partner[r] >= 0) {
          EXPECT_EQ(partner[partner[r]], r);
        }
    }
  }
}

TEST(CollectivePlan, TreeSpreadsInnerNodesOverBothTrees) {
  // In a double binary tree most ranks that forward in one tree are leaves in the other.
  const int n = 63;
  const auto plan = make_plan({.pattern = Pattern::tree_allreduce, .ranks = n, .pipeline = 1});
  Step up0, up1;
  int inner_in_both = 0;
  for (int r = 0; r < n; ++r) {
    plan->step(r, 0, up0);  // tree 0, piece 0, up
    plan->step(r, 1, up1);  // tree 1
    if (up0.receives.size() > 0 && up1.receives.size() > 0) ++inner_in_both;
  }
  EXPECT_LE(inner_in_both, 1);
}

TEST(CollectivePlan, PermutationIsTheSameForTheSameSeed) {
  auto targets = [](std::uint64_t seed) {
    const auto plan = make_plan({.pattern = Pattern::permutation, .ranks = 100, .seed = seed});
    std::vector<int> to;
    Step s;
    for (int r = 0; r < 100; ++r) {
      plan->step(r, 0, s);
      to.push_back(s.sends[0].peer);
    }
    return to;
  };
  EXPECT_EQ(targets(3), targets(3));
  EXPECT_NE(targets(3), targets(4));
}

TEST(CollectivePlan, BadOptionsAreRefusedWithTheFix) {
  EXPECT_THROW(make_plan({.pattern = Pattern::ring_allreduce, .ranks = 1}), Error);
  try {
    make_plan({.pattern = Pattern::hierarchical_allreduce, .ranks = 6, .ranks_per_host = 4});
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("6 ranks cannot be cut in hosts of 4"), std::string::npos);
  }
  EXPECT_THROW(make_plan({.pattern = Pattern::broadcast, .ranks = 4, .pipeline = 0}), Error);
  const auto plan = make_plan({.pattern = Pattern::ring_allreduce, .ranks = 4});
  Step s;
  EXPECT_THROW(plan->step(4, 0, s), Error);
  EXPECT_THROW(plan->step(0, 6, s), Error);
  EXPECT_EQ(pattern_from_name("tree_allreduce"), Pattern::tree_allreduce);
  EXPECT_FALSE(pattern_from_name("allreduce2").has_value());
}

TEST(CollectivePlan, TheFirstRankWithTooManyPeersIsFound) {
  // Against peers() rank by rank: the first whose list is longer.
  for (const Pattern p : all_patterns())
    for (const std::size_t most : {std::size_t{1}, std::size_t{2}, std::size_t{3}}) {
      const auto plan = make_plan({.pattern = p, .ranks = 8, .ranks_per_host = 2, .pipeline = 2});
      std::optional<RankPeers> expected;
      std::vector<int> peers;
      for (int r = 0; r < plan->ranks() && !expected; ++r) {
        plan->peers(r, peers);
        if (peers.size() > most) expected = RankPeers{r, peers.size()};
      }
      const auto got = rank_with_more_peers_than(*plan, most);
      ASSERT_EQ(got.has_value(), expected.has_value()) << to_string(p) << " " << most;
      if (got) {
        EXPECT_EQ(got->rank, expected->rank) << to_string(p) << " " << most;
        EXPECT_EQ(got->peers, expected->peers) << to_string(p) << " " << most;
      }
    }
  // A ring of 2 ranks has one peer each, of more, two.
  EXPECT_FALSE(rank_with_more_peers_than(*make_plan({.ranks = 2}), 1));
  EXPECT_EQ(rank_with_more_peers_than(*make_plan({.ranks = 3}), 1)->peers, 2u);
  EXPECT_FALSE(rank_with_more_peers_than(*make_plan({.ranks = 60000}), 2));
}

}  // namespace
}  // namespace rocehil::traffic
