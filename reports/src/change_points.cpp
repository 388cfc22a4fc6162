// E-divisive means, univariate, alpha = 1 (see the header for the method and its sources).
//
// For a split at t of a window w[0, n): m = t values on the left, k = n - t on the right,
//   E = 2/(m k) * sum|left - right| - 2/(m(m-1)) * sum|pairs in left| - 2/(k(k-1)) * sum|pairs in
//   right| Q = m k / (m + k) * E.
// The pair sums of every prefix and every suffix come from one pass each, adding a value at a
// time to a Fenwick tree over the values' ranks (the sum of |v - x| over the values in it is
// then two prefix queries), and the cross sum is the window's total minus both: O(n log n) a
// window instead of the O(n^2) of the definition.
#include "rocehil/reports/change_points.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "rocehil/common/error.hpp"
#include "rocehil/reports/comparison.hpp"
#include "rocehil/reports/t_test.hpp"

namespace rocehil::reports {

namespace {

// Counts and sums of the values added so far, by rank.
class RankTree {
 public:
  explicit RankTree(std::size_t n) : count_(n + 1, 0), sum_(n + 1, 0) {}
  void clear() {
    std::fill(count_.begin(), count_.end(), 0);
    std::fill(sum_.begin(), sum_.end(), 0);
    added_ = 0;
    total_ = 0;
  }
  // Sum of |value - x| over the values added, `value` having rank `rank`.
  double distance_sum(std::size_t rank, double value) const {
    std::size_t below = 0;
    double below_sum = 0;
    for (std::size_t i = rank; i > 0; i -= i & (~i + 1)) {
      below += count_[i];
      below_sum += sum_[i];
    }
    const std::size_t above = added_ - below;
    const double above_sum = total_ - below_sum;
    return value * static_cast<double>(below) - below_sum + above_sum -
           value * static_cast<double>(above);
  }
  void add(std::size_t rank, double value) {
    for (std::size_t i = rank + 1; i < count_.size(); i += i & (~i + 1)) {
      ++count_[i];
      sum_[i] += value;
    }
    ++added_;
    total_ += value;
  }

 private:
  std::vector<std::size_t> count_;
  std::vector<double> sum_;
  std::size_t added_ = 0;
  double total_ = 0;
};

// Q of every split of `values` (ranks[i]: the rank of values[i] among them), into `q`.
void divergences(std::span<const double> values, std::span<const std::size_t> ranks,
                 std::size_t min_segment, RankTree& tree, std::vector<double>& prefix,
                 std::vector<double>& suffix, std::vector<double>& q) {
  const std::size_t n = values.size();
  q.assign(n + 1, 0.0);
  if (n < 2 * min_segment) return;
  prefix.assign(n + 1, 0.0);  // prefix[t]: sum over pairs within values[0, t)
  suffix.assign(n + 1, 0.0);  // suffix[t]: sum over pairs within values[t, n)
  tree.clear();
  for (std::size_t t = 0; t < n; ++t) {
    prefix[t + 1] = prefix[t] + tree.distance_sum(ranks[t], values[t]);
    tree.add(ranks[t], values[t]);
  }
  tree.clear();
  for (std::size_t t = n; t-- > 0;) {
    suffix[t] = suffix[t + 1] + tree.distance_sum(ranks[t], values[t]);
    tree.add(ranks[t], values[t]);
  }
  const double all = prefix[n];
  for (std::size_t t = min_segment; t + min_segment <= n; ++t) {
    const auto m = static_cast<double>(t), k = static_cast<double>(n - t);
    const double across = all - prefix[t] - suffix[t];
    const double e =
        2 * across / (m * k) - 2 * prefix[t] / (m * (m - 1)) - 2 * suffix[t] / (k * (k - 1));
    q[t] = m * k / (m + k) * e;
  }
}

std::size_t best_split(const std::vector<double>& q) {
  return static_cast<std::size_t>(std::max_element(q.begin(), q.end()) - q.begin());
}

// splitmix64 (Steele, Lea and Flood, "Fast splittable pseudorandom number generators", 2014):
// a few lines, so the Python reference draws the very same permutations.
class SplitMix64 {
 public:
  explicit SplitMix64(std::uint64_t seed) : state_(seed) {}
  std::uint64_t next() {
    std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }

 private:
  std::uint64_t state_;
};

class Search {
 public:
  Search(std::span<const double> series, const ChangePointOptions& options)
      : series_(series), options_(options), tree_(series.size()) {}

  void window(std::size_t begin, std::size_t end, std::vector<ChangePoint>& found) {
    const std::size_t n = end - begin;
    if (n < 2 * options_.min_segment) return;
    values_.assign(series_.begin() + static_cast<std::ptrdiff_t>(begin),
                   series_.begin() + static_cast<std::ptrdiff_t>(end));
    rank_values();
    divergences(values_, ranks_, options_.min_segment, tree_, prefix_, suffix_, q_);
    const std::size_t split = best_split(q_);
    const double observed = q_[split];
    if (!(observed > 0)) return;
    const double p_t = t_test_p(begin, begin + split, end);
    // Permutations of the window's values, each value keeping its rank. A permutation counts
    // when its best split is at least as divergent (within rounding, the same in the
    // reference); the test stops once the count alone keeps its p-value, doubled, above max_p.
    SplitMix64 random(options_.seed ^ (static_cast<std::uint64_t>(begin) << 32 | end));
    const double tie = observed * (1 - 1e-12);
    const double limit = options_.max_p / 2 * static_cast<double>(options_.permutations + 1);
    std::size_t as_large = 0;
    bool stopped = false;
    for (std::size_t r = 0; r < options_.permutations && !stopped; ++r) {
      for (std::size_t i = n - 1; i > 0; --i) {
        const auto j = static_cast<std::size_t>(random.next() % (i + 1));
        std::swap(values_[i], values_[j]);
        std::swap(ranks_[i], ranks_[j]);
      }
      divergences(values_, ranks_, options_.min_segment, tree_, prefix_, suffix_, q_);
      if (q_[best_split(q_)] >= tie && static_cast<double>(++as_large + 1) > limit) stopped = true;
    }
    std::optional<double> p_permutation;
    if (!stopped)
      p_permutation =
          static_cast<double>(as_large + 1) / static_cast<double>(options_.permutations + 1);
    const double p = std::min(1.0, 2 * std::min(p_permutation.value_or(1.0), p_t));
    if (!(p <= options_.max_p)) return;
    if (large_enough(begin, begin + split, end))
      found.push_back({begin + split, observed, p, p_permutation, p_t});
    window(begin, begin + split, found);
    window(begin + split, end, found);
  }

 private:
  // Student's t-test of [begin, split) against [split, end) of the series, on the logarithms when
  // every value is positive, times the number of splits the window offered.
  double t_test_p(std::size_t begin, std::size_t split, std::size_t end) {
    const bool positive = std::all_of(series_.begin() + static_cast<std::ptrdiff_t>(begin),
                                      series_.begin() + static_cast<std::ptrdiff_t>(end),
                                      [](double v) { return v > 0; });
    left_.clear();
    right_.clear();
    for (std::size_t i = begin; i < end; ++i)
      (i < split ? left_ : right_).push_back(positive ? std::log(series_[i]) : series_[i]);
    const auto splits = static_cast<double>(end - begin - 2 * options_.min_segment + 1);
    return std::min(1.0, splits * pooled_t_test(left_, right_).p_value);
  }

  // Whether the medians of [begin, split) and [split, end) differ by min_change_pct of the left's.
  bool large_enough(std::size_t begin, std::size_t split, std::size_t end) {
    if (options_.min_change_pct <= 0) return true;
    const auto at = [&](std::size_t i) { return series_.begin() + static_cast<std::ptrdiff_t>(i); };
    const double before = median({at(begin), at(split)}), after = median({at(split), at(end)});
    return after != before &&
           std::abs(after - before) * 100 >= options_.min_change_pct * std::abs(before);
  }

  // ranks_[i]: the position of values_[i] in the window's sorted values (ties in order).
  void rank_values() {
    order_.resize(values_.size());
    std::iota(order_.begin(), order_.end(), std::size_t{0});
    std::stable_sort(order_.begin(), order_.end(),
                     [&](std::size_t a, std::size_t b) { return values_[a] < values_[b]; });
    ranks_.resize(values_.size());
    for (std::size_t r = 0; r < order_.size(); ++r) ranks_[order_[r]] = r;
  }

  std::span<const double> series_;
  const ChangePointOptions& options_;
  RankTree tree_;
  std::vector<double> values_, prefix_, suffix_, q_, left_, right_;
  std::vector<std::size_t> order_, ranks_;
};

void check(std::span<const double> series, const ChangePointOptions& options) {
  if (options.min_segment < 2)
    throw input_error(
        fmt::format("change points: min_segment {} is below 2 (a side needs a pair "
                    "of values to measure its spread)",
                    options.min_segment));
  if (!(options.max_p > 0 && options.max_p < 1))
    throw input_error(fmt::format("change points: max_p {} is outside (0, 1)", options.max_p));
  if (options.permutations == 0) throw input_error("change points: no permutations to test with");
  if (!(options.min_change_pct >= 0 && std::isfinite(options.min_change_pct)))
    throw input_error(
        fmt::format("change points: min_change_pct {} is not a percentage of 0 or more",
                    options.min_change_pct));
  for (std::size_t i = 0; i < series.size(); ++i)
    if (!std::isfinite(series[i]))
      throw input_error(fmt::format(
          "change points: value {} is {} (leave a missing value out of the series)", i, series[i]));
}

}  // namespace

std::vector<double> divergence_of_splits(std::span<const double> window, std::size_t min_segment) {
  check(window, {.min_segment = min_segment});
  std::vector<double> values(window.begin(), window.end());
  std::vector<std::size_t> order(values.size()), ranks(values.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return values[a] < values[b]; });
  for (std::size_t r = 0; r < order.size(); ++r) ranks[order[r]] = r;
  RankTree tree(values.size());
  std::vector<double> prefix, suffix, q;
  divergences(values, ranks, min_segment, tree, prefix, suffix, q);
  q.resize(values.size());
  return q;
}

std::vector<ChangePoint> find_change_points(std::span<const double> series,
                                            const ChangePointOptions& options) {
  check(series, options);
  std::vector<ChangePoint> found;
  Search(series, options).window(0, series.size(), found);
  std::sort(found.begin(), found.end(),
            [](const ChangePoint& a, const ChangePoint& b) { return a.index < b.index; });
  return found;
}

}  // namespace rocehil::reports
