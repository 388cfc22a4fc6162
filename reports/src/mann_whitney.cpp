#include "rocehil/reports/mann_whitney.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

namespace rocehil::reports {

namespace {

// P(U >= u) for samples of m and n values without ties, by the recurrence on which sample holds
// the largest value: p(i, j, u) = i/(i+j) p(i-1, j, u-j) + j/(i+j) p(i, j-1, u). Probabilities,
// not counts, so nothing overflows; the outer loop runs over the larger sample and keeps one row
// per size of the smaller, so memory is O(m * m * n) with m <= 8.
double exact_upper_tail(int m, int n, double u) {
  if (m > n) std::swap(m, n);  // U's distribution is symmetric in the sample sizes
  // prev[i] / cur[i]: the distribution of U for sizes (i, j-1) / (i, j), indexed by U.
  std::vector<std::vector<double>> prev(static_cast<std::size_t>(m) + 1);
  std::vector<std::vector<double>> cur(static_cast<std::size_t>(m) + 1);
  for (auto& row : prev) row = {1.0};  // j = 0: U is 0 for certain
  for (int j = 1; j <= n; ++j) {
    cur[0] = {1.0};
    for (int i = 1; i <= m; ++i) {
      auto& d = cur[static_cast<std::size_t>(i)];
      d.assign(static_cast<std::size_t>(i * j) + 1, 0.0);
      const auto& smaller_i = cur[static_cast<std::size_t>(i) - 1];  // (i-1, j)
      const auto& smaller_j = prev[static_cast<std::size_t>(i)];     // (i, j-1)
      const double wi = static_cast<double>(i) / (i + j), wj = static_cast<double>(j) / (i + j);
      for (std::size_t k = 0; k < smaller_i.size(); ++k)
        d[k + static_cast<std::size_t>(j)] += wi * smaller_i[k];
      for (std::size_t k = 0; k < smaller_j.size(); ++k) d[k] += wj * smaller_j[k];
    }
    std::swap(prev, cur);
  }
  const auto& dist = prev[static_cast<std::size_t>(m)];
  double tail = 0;
  for (std::size_t k = dist.size(); k-- > 0;) {
    if (static_cast<double>(k) < u) break;
    tail += dist[k];
  }
  return tail;
}

// Ranks 1..N of the pooled values, ties given their mean rank; also SciPy's tie term
// sum(t^3 - t) over groups of t equal values.
std::vector<double> pooled_ranks(std::span<const double> a, std::span<const double> b,
                                 double& tie_term) {
  std::vector<double> values(a.begin(), a.end());
  values.insert(values.end(), b.begin(), b.end());
  std::vector<std::size_t> order(values.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(),
            [&](std::size_t x, std::size_t y) { return values[x] < values[y]; });
  std::vector<double> ranks(values.size());
  tie_term = 0;
  for (std::size_t start = 0; start < order.size();) {
    std::size_t end = start + 1;
    while (end < order.size() && values[order[end]] == values[order[start]]) ++end;
    const double mean_rank = (static_cast<double>(start + 1) + static_cast<double>(end)) / 2;
    for (std::size_t k = start; k < end; ++k) ranks[order[k]] = mean_rank;
    const auto t = static_cast<double>(end - start);
    tie_term += t * t * t - t;
    start = end;
  }
  return ranks;
}

}  // namespace

MannWhitney mann_whitney_u(std::span<const double> a, std::span<const double> b) {
  const auto n1 = static_cast<double>(a.size()), n2 = static_cast<double>(b.size());
  double tie_term = 0;
  const std::vector<double> ranks = pooled_ranks(a, b, tie_term);
  const double r1 = std::accumulate(ranks.begin(), ranks.begin() + std::ssize(a), 0.0);
  MannWhitney out;
  out.u = r1 - n1 * (n1 + 1) / 2;
  const double u_max = std::max(out.u, n1 * n2 - out.u);  // two-sided: the larger tail, doubled
  out.exact = tie_term == 0 && (a.size() <= 8 || b.size() <= 8);
  double p = 0;
  if (out.exact) {
    p = exact_upper_tail(static_cast<int>(a.size()), static_cast<int>(b.size()), u_max);
  } else {
    const double n = n1 + n2;
    const double sigma = std::sqrt(n1 * n2 / 12 * ((n + 1) - tie_term / (n * (n - 1))));
    const double z = (u_max - n1 * n2 / 2 - 0.5) / sigma;
    // Every value equal: sigma is 0 and nothing differs.
    p = sigma > 0 ? 0.5 * std::erfc(z / std::sqrt(2.0)) : 0.5;
  }
  out.p_value = std::clamp(2 * p, 0.0, 1.0);
  return out;
}

double smallest_p_value(int n1, int n2) {
  // Complete separation is the one most extreme arrangement of C(n1 + n2, n1), in each tail.
  double arrangements = 1;
  for (int k = 1; k <= n1; ++k) arrangements = arrangements * (n2 + k) / k;
  return std::min(1.0, 2 / arrangements);
}

}  // namespace rocehil::reports
