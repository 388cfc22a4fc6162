#pragma once

#include <cstddef>
#include <cstdint>
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
// again. Nothing is assumed about the values' distribution.
struct ChangePointOptions {
  std::size_t min_segment = 3;  // values on each side of a split, at least (2 or more)
  double max_p = 0.05;          // a split is kept when its permutation p-value is at most this
  std::size_t permutations = 199;
  // The permutations' generator (splitmix64): the same series always gives the same answer.
  std::uint64_t seed = 1;
};

struct ChangePoint {
  std::size_t index = 0;  // the first value after the change
  double q = 0;           // its divergence
  double p = 0;           // the permutation test's p-value
};

// In ascending index order. Throws rocehil::Error (bad input): min_segment below 2, max_p
// outside (0, 1), no permutations, a value that is not finite.
std::vector<ChangePoint> find_change_points(std::span<const double> series,
                                            const ChangePointOptions& options = {});

// Q for each split of `window` at t (values [0, t) against [t, n)), for t in
// [min_segment, n - min_segment]; the other entries (and every entry of a window too short to
// split) are 0. What the search maximizes; exposed for the reference comparison.
std::vector<double> divergence_of_splits(std::span<const double> window, std::size_t min_segment);

}  // namespace rocehil::reports
