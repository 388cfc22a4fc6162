// How long planning takes at scale, and what it holds in memory (design: nothing O(N^2) is
// built). For each pattern at --ranks: building the plan, every rank's peer list (what the
// controller needs to set up connections) and one rank's whole schedule (what an agent needs).
// For alltoall, also every step of every rank: N(N-1) transfers enumerated.
//
// The reference, measured in the same run: the same alltoall enumeration done the way a planner
// that materializes does it (every transfer stored in one vector), at --reference-ranks, where
// it still fits in memory; the ratio compares time per transfer and bytes held.
#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "rocehil/traffic/collective.hpp"

namespace {

using rocehil::traffic::CollectivePlan;
using rocehil::traffic::make_plan;
using rocehil::traffic::Pattern;
using rocehil::traffic::PlanOptions;
using rocehil::traffic::Step;
using rocehil::traffic::Transfer;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// Resident memory now, from /proc (VmRSS, kB).
long rss_kb() {
  std::ifstream status("/proc/self/status");
  std::string key;
  long value = 0;
  while (status >> key) {
    if (key == "VmRSS:") {
      status >> value;
      return value;
    }
    status.ignore(1 << 10, '\n');
  }
  return 0;
}

struct Timing {
  double build_s = 0, peers_s = 0, one_rank_s = 0;
  std::uint64_t peer_entries = 0, one_rank_transfers = 0;
  long rss_growth_kb = 0;
};

Timing plan_at_scale(Pattern pattern, int ranks, int per_host) {
  Timing t;
  const long rss0 = rss_kb();
  auto start = Clock::now();
  const auto plan = make_plan(
      {.pattern = pattern, .ranks = ranks, .bytes = 1ull << 30, .ranks_per_host = per_host});
  t.build_s = seconds_since(start);

  start = Clock::now();
  std::vector<int> peers;
  for (int r = 0; r < ranks; ++r) {
    plan->peers(r, peers);
    t.peer_entries += peers.size() + static_cast<std::uint64_t>(plan->steps(r) > 0 ? 0 : 1);
  }
  t.peers_s = seconds_since(start);

  start = Clock::now();
  Step s;
  for (int i = 0; i < plan->steps(0); ++i) {
    plan->step(0, i, s);
    t.one_rank_transfers += s.sends.size() + s.receives.size();
  }
  t.one_rank_s = seconds_since(start);
  t.rss_growth_kb = rss_kb() - rss0;
  return t;
}

// Every step of every rank, no storage: the lazy way.
std::uint64_t enumerate_lazily(const CollectivePlan& plan, std::uint64_t& checksum) {
  Step s;
  std::uint64_t transfers = 0;
  for (int r = 0; r < plan.ranks(); ++r)
    for (int i = 0; i < plan.steps(r); ++i) {
      plan.step(r, i, s);
      for (const auto& x : s.sends) checksum += static_cast<std::uint64_t>(x.peer) + x.dst_offset;
      transfers += s.sends.size();
    }
  return transfers;
}

// The same, stored: what a planner that builds the whole schedule holds.
std::vector<Transfer> enumerate_materialized(const CollectivePlan& plan, std::uint64_t& checksum) {
  std::vector<Transfer> all;
  Step s;
  for (int r = 0; r < plan.ranks(); ++r)
    for (int i = 0; i < plan.steps(r); ++i) {
      plan.step(r, i, s);
      all.insert(all.end(), s.sends.begin(), s.sends.end());
    }
  for (const auto& x : all) checksum += static_cast<std::uint64_t>(x.peer) + x.dst_offset;
  return all;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Planner cost at scale: rocehil's lazy plans vs a materialized schedule"};
  int ranks = 32768;
  int reference_ranks = 4096;
  int per_host = 8;
  app.add_option("--ranks", ranks, "ranks to plan for")->check(CLI::Range(2, 1 << 20));
  app.add_option("--reference-ranks", reference_ranks,
                 "ranks for the lazy vs materialized alltoall comparison")
      ->check(CLI::Range(2, 16384));
  app.add_option("--ranks-per-host", per_host, "hierarchical_allreduce: NICs per host");
  CLI11_PARSE(app, argc, argv);

  fmt::print("planning {} ranks (hierarchical: {} per host)\n", ranks, per_host);
  fmt::print("{:<24} {:>9} {:>10} {:>12} {:>11} {:>14} {:>9}\n", "pattern", "build s", "peers s",
             "peer entries", "rank 0 s", "rank 0 xfers", "RSS +MB");
  for (const Pattern p : rocehil::traffic::all_patterns()) {
    const Timing t = plan_at_scale(p, ranks, per_host);
    fmt::print("{:<24} {:>9.4f} {:>10.4f} {:>12} {:>11.4f} {:>14} {:>9.1f}\n", to_string(p),
               t.build_s, t.peers_s, t.peer_entries, t.one_rank_s, t.one_rank_transfers,
               static_cast<double>(t.rss_growth_kb) / 1024);
  }

  std::uint64_t checksum = 0;
  {
    const auto plan =
        make_plan({.pattern = Pattern::alltoall, .ranks = ranks, .bytes = 1ull << 30});
    const long rss0 = rss_kb();
    const auto start = Clock::now();
    const std::uint64_t n = enumerate_lazily(*plan, checksum);
    const double s = seconds_since(start);
    fmt::print(
        "\nalltoall, every step of every rank at {} ranks: {} transfers in {:.3f} s "
        "({:.2f} ns each), RSS +{:.1f} MB\n",
        ranks, n, s, s * 1e9 / static_cast<double>(n), static_cast<double>(rss_kb() - rss0) / 1024);
  }

  const auto plan =
      make_plan({.pattern = Pattern::alltoall, .ranks = reference_ranks, .bytes = 1ull << 30});
  long rss0 = rss_kb();
  auto start = Clock::now();
  const std::uint64_t lazy_n = enumerate_lazily(*plan, checksum);
  const double lazy_s = seconds_since(start);
  const long lazy_kb = rss_kb() - rss0;
  rss0 = rss_kb();
  start = Clock::now();
  const auto stored = enumerate_materialized(*plan, checksum);
  const double stored_s = seconds_since(start);
  const long stored_kb = rss_kb() - rss0;
  fmt::print(
      "alltoall at {} ranks, {} transfers: lazy {:.3f} s, RSS +{:.1f} MB; materialized "
      "(reference) {:.3f} s, RSS +{:.1f} MB; time ratio lazy/reference {:.2f}\n",
      reference_ranks, lazy_n, lazy_s, static_cast<double>(lazy_kb) / 1024, stored_s,
      static_cast<double>(stored_kb) / 1024, lazy_s / stored_s);
  if (stored.size() != lazy_n) {
    fmt::print(stderr, "the two enumerations disagree: {} vs {}\n", stored.size(), lazy_n);
    return 1;
  }
  fmt::print("(checksum {:x})\n", checksum);
  return 0;
}
