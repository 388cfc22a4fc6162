#include "rocehil/traffic/collective.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "plan/plan_kinds.hpp"
#include "rocehil/common/error.hpp"

namespace rocehil::traffic {

namespace {

struct Named {
  Pattern pattern;
  std::string_view name;
};
constexpr Named names[] = {
    {Pattern::ring_allreduce, "allreduce"},
    {Pattern::ring_allgather, "allgather"},
    {Pattern::ring_reduce_scatter, "reduce_scatter"},
    {Pattern::alltoall, "alltoall"},
    {Pattern::broadcast, "broadcast"},
    {Pattern::tree_allreduce, "tree_allreduce"},
    {Pattern::hierarchical_allreduce, "hierarchical_allreduce"},
    {Pattern::incast, "incast"},
    {Pattern::permutation, "permutation"},
    {Pattern::pairwise, "pairwise"},
};

}  // namespace

std::string_view to_string(Pattern pattern) {
  for (const auto& n : names)
    if (n.pattern == pattern) return n.name;
  return "?";
}

std::optional<Pattern> pattern_from_name(std::string_view name) {
  for (const auto& n : names)
    if (n.name == name) return n.pattern;
  return std::nullopt;
}

const std::vector<Pattern>& all_patterns() {
  static const std::vector<Pattern> all = [] {
    std::vector<Pattern> v;
    for (const auto& n : names) v.push_back(n.pattern);
    return v;
  }();
  return all;
}

double busbw_factor(Pattern pattern, int ranks) {
  const double n = ranks;
  switch (pattern) {
    case Pattern::ring_allreduce:
    case Pattern::tree_allreduce:
    case Pattern::hierarchical_allreduce: return 2 * (n - 1) / n;
    case Pattern::ring_allgather:
    case Pattern::ring_reduce_scatter:
    case Pattern::alltoall: return (n - 1) / n;
    case Pattern::incast: return n - 1;
    case Pattern::broadcast:
    case Pattern::permutation:
    case Pattern::pairwise: return 1;
  }
  return 1;
}

void CollectivePlan::check_step(int rank, int step) const {
  if (rank < 0 || rank >= ranks())
    throw input_error(
        fmt::format("{}: rank {} is outside 0..{}", to_string(pattern()), rank, ranks() - 1));
  if (step < 0 || step >= steps(rank))
    throw input_error(fmt::format("{}: rank {} has steps 0..{}, not {}", to_string(pattern()), rank,
                                  steps(rank) - 1, step));
}

void CollectivePlan::peers(int rank, std::vector<int>& out) const {
  out.clear();
  Step s;
  for (int i = 0; i < steps(rank); ++i) {
    step(rank, i, s);
    for (const auto& t : s.sends) out.push_back(t.peer);
    for (const auto& t : s.receives) out.push_back(t.peer);
  }
  plan::normalize_peers(out);
}

std::optional<RankPeers> rank_with_more_peers_than(const CollectivePlan& plan, std::size_t most) {
  if (static_cast<std::size_t>(plan.ranks() - 1) <= most) return std::nullopt;
  std::vector<int> peers;
  for (int r = 0; r < plan.ranks(); ++r) {
    plan.peers(r, peers);
    if (peers.size() > most) return RankPeers{r, peers.size()};
  }
  return std::nullopt;
}

void plan::normalize_peers(std::vector<int>& peers) {
  std::sort(peers.begin(), peers.end());
  peers.erase(std::unique(peers.begin(), peers.end()), peers.end());
}

std::unique_ptr<CollectivePlan> make_plan(const PlanOptions& options) {
  const auto name = to_string(options.pattern);
  if (options.ranks < 2)
    throw input_error(fmt::format("{} needs at least 2 ranks, got {} (select more hosts or NICs)",
                                  name, options.ranks));
  if (options.pipeline < 1 || options.pipeline > 1024)
    throw input_error(fmt::format("{}: pipeline {} is outside 1..1024", name, options.pipeline));
  switch (options.pattern) {
    case Pattern::ring_allreduce:
    case Pattern::ring_allgather:
    case Pattern::ring_reduce_scatter: return plan::make_ring(options);
    case Pattern::alltoall: return plan::make_alltoall(options);
    case Pattern::broadcast: return plan::make_broadcast(options);
    case Pattern::tree_allreduce: return plan::make_tree(options);
    case Pattern::hierarchical_allreduce: return plan::make_hierarchical(options);
    case Pattern::incast: return plan::make_incast(options);
    case Pattern::permutation: return plan::make_permutation(options);
    case Pattern::pairwise: return plan::make_pairwise(options);
  }
  throw input_error(fmt::format("unknown pattern {}", static_cast<int>(options.pattern)));
}

}  // namespace rocehil::traffic
