#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

namespace rocehil::reports {

// Change points in a series of runs' values: E-divisive means (Matteson and James, "A
// Nonparametric Approach for Multiple Change Point Analysis of Multivariate Data", JASA 2014,
// arXiv:1306.4933), univariate with alpha = 1, as MongoDB runs it over its nightly performance
// tests (Daly et al., "The Use of Change Point Detection to Identify Software Performance
// Regressions in a Continuous Integration System", ICPE 2020): in a window, the split with the
// largest divergence Q between the values before and after it is a candidate; a permutation
// test on the window's values says whether it is significant; if so, each side is searched
// again. The permutation test assumes nothing about the values' distribution, but it cannot
// see a step in a short window: three runs against three are 20 orderings, so no split of six
// values reaches p < 0.1 however large the step. So the same split also gets Student's t-test
// (t_test.hpp; on the logarithms when every value is positive, since bandwidth and latency
// move by ratios), its p-value multiplied by the number of splits the window offered (the
// search picked the best of them); a split is kept when the smaller of the two p-values,
// doubled (one chance per test), is at most max_p. A clear step is then found with min_segment
// runs after it; a noisy one waits until the permutations can tell.
struct ChangePointOptions {
  std::size_t min_segment = 3;  // values on each side of a split, at least (2 or more)
  double max_p = 0.01;          // a split is kept when its p-value is at most this
  std::size_t permutations = 999;
  // A significant split is kept only when the medians of its two sides differ by at least this
  // many percent of the left side's (as rocehil compare's --min-change): on a shared machine or
  // a busy fabric, runs shift by a few percent for reasons no one changed, and a nightly alarm
  // on those is noise. A split rejected for its size is still searched on each side.
  double min_change_pct = 0;
  // The permutations' generator (splitmix64): the same series always gives the same answer.
  std::uint64_t seed = 1;
};

struct ChangePoint {
  std::size_t index = 0;  // the first value after the change
  double q = 0;           // its divergence
  double p = 0;           // twice the smaller of the two tests' p-values, at most 1
  // The permutation test's p-value; empty when the test stopped once it could not reach max_p
  // (the t-test alone then kept the split).
  std::optional<double> p_permutation;
  double p_t = 1;  // the t-test's, times the window's number of splits, at most 1
};

// In ascending index order. Throws rocehil::Error (bad input): min_segment below 2, max_p
// outside (0, 1), no permutations, min_change_pct negative or not finite, a value that is not
// finite.
std::vector<ChangePoint> find_change_points(std::span<const double> series,
                                            const ChangePointOptions& options = {});

// Q for each split of `window` at t (values [0, t) against [t, n)), for t in
// [min_segment, n - min_segment]; the other entries (and every entry of a window too short to
// split) are 0. What the search maximizes; exposed for the reference comparison.
std::vector<double> divergence_of_splits(std::span<const double> window, std::size_t min_segment);

}  // namespace rocehil::reports
