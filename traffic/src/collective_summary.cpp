#include "rocehil/traffic/collective_summary.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "rocehil/common/error.hpp"

namespace rocehil::traffic {

namespace {

// Nearest-rank percentile of sorted values.
double percentile(const std::vector<double>& sorted, double p) {
  if (sorted.empty()) return 0;
  const auto rank =
      static_cast<std::size_t>(std::ceil(p / 100 * static_cast<double>(sorted.size())));
  return sorted[std::clamp<std::size_t>(rank, 1, sorted.size()) - 1];
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t m = v.size() / 2;
  return v.size() % 2 == 1 ? v[m] : (v[m - 1] + v[m]) / 2;
}

}  // namespace

CollectiveSummary summarize_collective(const CollectivePlan& plan,
                                       const std::vector<RankTiming>& ranks) {
  if (ranks.size() != static_cast<std::size_t>(plan.ranks()))
    throw input_error(fmt::format("{} results for {} ranks", ranks.size(), plan.ranks()));
  CollectiveSummary s;
  std::size_t iterations = ranks.front().iteration_end_ns.size();
  std::int64_t begin = ranks.front().start_ns;
  for (const auto& r : ranks) {
    iterations = std::min(iterations, r.iteration_end_ns.size());
    begin = std::max(begin, r.start_ns);
  }
  s.iterations = iterations;
  std::vector<double> times_us;
  times_us.reserve(iterations);
  std::int64_t previous = begin;
  for (std::size_t i = 0; i < iterations; ++i) {
    std::int64_t end = ranks.front().iteration_end_ns[i];
    for (const auto& r : ranks) end = std::max(end, r.iteration_end_ns[i]);
    times_us.push_back(static_cast<double>(end - previous) / 1e3);
    previous = end;
  }
  if (!times_us.empty()) {
    const double sum = std::accumulate(times_us.begin(), times_us.end(), 0.0);
    s.time_us = sum / static_cast<double>(times_us.size());
    double square = 0;
    for (const double t : times_us) square += (t - s.time_us) * (t - s.time_us);
    s.time_cv =
        s.time_us > 0 ? std::sqrt(square / static_cast<double>(times_us.size())) / s.time_us : 0;
    s.iteration_us = times_us;  // in iteration order, for the report's distribution
    std::sort(times_us.begin(), times_us.end());
    s.time_p50_us = percentile(times_us, 50);
    s.time_p99_us = percentile(times_us, 99);
    s.time_max_us = times_us.back();
  }
  if (s.time_us > 0) {
    s.algbw_gbytes_s = static_cast<double>(plan.bytes()) / (s.time_us * 1e3);
    s.busbw_gbytes_s = s.algbw_gbytes_s * busbw_factor(plan.pattern(), plan.ranks());
    s.busbw_gbps = s.busbw_gbytes_s * 8;
  }
  for (const auto& r : ranks)
    s.wait_ms.push_back(static_cast<double>(r.wait_total_ns.value_or(std::accumulate(
                            r.wait_ns.begin(), r.wait_ns.end(), std::uint64_t{0}))) /
                        1e6);
  const double typical = median(s.wait_ms);
  const auto least = std::min_element(s.wait_ms.begin(), s.wait_ms.end());
  // Where some ranks only send (a broadcast's root, an incast's senders) waiting tells nothing.
  const bool everyone_receives =
      plan.pattern() != Pattern::broadcast && plan.pattern() != Pattern::incast;
  if (everyone_receives && ranks.size() > 2 && typical > 0 && *least < typical / 2)
    s.straggler = static_cast<int>(least - s.wait_ms.begin());
  return s;
}

PairwiseMatrix pairwise_matrix(const CollectivePlan& plan, const std::vector<RankTiming>& ranks,
                               std::uint64_t iterations, double tolerance) {
  if (plan.pattern() != Pattern::pairwise)
    throw input_error(fmt::format("a pairwise matrix needs the pairwise pattern, not {}",
                                  to_string(plan.pattern())));
  if (ranks.size() != static_cast<std::size_t>(plan.ranks()))
    throw input_error(fmt::format("{} results for {} ranks", ranks.size(), plan.ranks()));
  PairwiseMatrix m;
  m.ranks = plan.ranks();
  const auto n = static_cast<std::size_t>(m.ranks);
  // A pair whose step no rank timed (no measured iteration) is unknown, not 0 Gbit/s: a dead
  // pair is what an engineer would read into a 0.
  m.gbps.assign(n * n, std::numeric_limits<double>::quiet_NaN());
  Step s;
  for (int r = 0; r < m.ranks; ++r) {
    const auto& timing = ranks[static_cast<std::size_t>(r)];
    for (int i = 1; i < plan.steps(r); i += 2) {  // the data steps
      plan.step(r, i, s);
      if (s.sends.empty() || static_cast<std::size_t>(i) >= timing.step_ns.size()) continue;
      const double ns = static_cast<double>(timing.step_ns[static_cast<std::size_t>(i)]);
      if (ns > 0 && iterations > 0)
        m.gbps[static_cast<std::size_t>(r) * n + static_cast<std::size_t>(s.sends[0].peer)] =
            static_cast<double>(plan.bytes()) * 8 * static_cast<double>(iterations) / ns;
    }
  }
  std::vector<double> all;
  for (std::size_t a = 0; a < n; ++a)
    for (std::size_t b = 0; b < n; ++b)
      if (a != b && !std::isnan(m.gbps[a * n + b])) all.push_back(m.gbps[a * n + b]);
  m.median_gbps = all.empty() ? std::numeric_limits<double>::quiet_NaN() : median(all);
  std::vector<int> bad_pairs(n, 0);
  for (int a = 0; a < m.ranks; ++a)
    for (int b = a + 1; b < m.ranks; ++b) {
      // A pair is as slow as the slower of its two views (fmin: the one there is).
      const double g = std::fmin(m.at(a, b), m.at(b, a));
      if (g < (1 - tolerance) * m.median_gbps) {
        m.outliers.push_back({a, b, g});
        ++bad_pairs[static_cast<std::size_t>(a)];
        ++bad_pairs[static_cast<std::size_t>(b)];
      }
    }
  std::sort(m.outliers.begin(), m.outliers.end(),
            [](const auto& x, const auto& y) { return x.gbps < y.gbps; });
  for (int r = 0; r < m.ranks; ++r)
    if (bad_pairs[static_cast<std::size_t>(r)] > 1 &&
        2 * bad_pairs[static_cast<std::size_t>(r)] >= m.ranks - 1)
      m.suspects.push_back(r);
  return m;
}

}  // namespace rocehil::traffic
