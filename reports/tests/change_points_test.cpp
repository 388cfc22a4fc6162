// E-divisive means on series with planted truth: the divergence against its definition computed
// the slow way, steps found where they were planted, and precision and recall over many seeds.
#include "rocehil/reports/change_points.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <random>

#include "rocehil/common/error.hpp"

namespace rocehil::reports {
namespace {

// Q of the split at t, straight from Matteson and James's definition (alpha = 1).
double divergence_by_definition(const std::vector<double>& w, std::size_t t) {
  const std::size_t n = w.size();
  double across = 0, left = 0, right = 0;
  for (std::size_t i = 0; i < t; ++i)
    for (std::size_t j = t; j < n; ++j) across += std::abs(w[i] - w[j]);
  for (std::size_t i = 0; i < t; ++i)
    for (std::size_t j = i + 1; j < t; ++j) left += std::abs(w[i] - w[j]);
  for (std::size_t i = t; i < n; ++i)
    for (std::size_t j = i + 1; j < n; ++j) right += std::abs(w[i] - w[j]);
  const auto m = static_cast<double>(t), k = static_cast<double>(n - t);
  const double e = 2 * across / (m * k) - left / (m * (m - 1) / 2) - right / (k * (k - 1) / 2);
  return m * k / (m + k) * e;
}

std::vector<double> noise(std::mt19937_64& random, std::size_t n, double mean, double sd) {
  std::normal_distribution<double> draw(mean, sd);
  std::vector<double> out(n);
  for (auto& v : out) v = draw(random);
  return out;
}

TEST(ChangePoints, TheDivergenceOfEverySplitIsTheDefinitions) {
  std::mt19937_64 random(11);
  for (const std::size_t n : {4u, 7u, 20u, 61u}) {
    auto w = noise(random, n, 50, 5);
    w[n / 2] = w[1];  // a tie
    const auto q = divergence_of_splits(w, 2);
    ASSERT_EQ(q.size(), n);
    for (std::size_t t = 0; t < n; ++t) {
      if (t < 2 || t + 2 > n) {
        EXPECT_EQ(q[t], 0.0) << "n " << n << " t " << t;
        continue;
      }
      const double want = divergence_by_definition(w, t);
      EXPECT_NEAR(q[t], want, 1e-9 * std::max(1.0, std::abs(want))) << "n " << n << " t " << t;
    }
  }
}

TEST(ChangePoints, AStepOfTwentyPercentIsFoundAtItsRun) {
  // 16 nightly runs of a bandwidth with 1% noise; the uplink lowered 20% from run 9 (index 8).
  std::mt19937_64 random(3);
  auto series = noise(random, 16, 100, 1);
  for (std::size_t i = 8; i < series.size(); ++i) series[i] *= 0.8;
  const auto found = find_change_points(series);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].index, 8u);
  EXPECT_LE(found[0].p, 0.05);
  EXPECT_GT(found[0].q, 0);
}

TEST(ChangePoints, TwoStepsAreBothFoundAndAStableSeriesHasNone) {
  std::mt19937_64 random(5);
  auto series = noise(random, 40, 10, 0.2);
  for (std::size_t i = 12; i < 40; ++i) series[i] += 2;
  for (std::size_t i = 27; i < 40; ++i) series[i] -= 3;
  const auto found = find_change_points(series);
  ASSERT_EQ(found.size(), 2u);
  EXPECT_EQ(found[0].index, 12u);
  EXPECT_EQ(found[1].index, 27u);
  EXPECT_TRUE(find_change_points(noise(random, 40, 10, 0.2)).empty());
  EXPECT_TRUE(find_change_points(std::vector<double>(30, 7.0)).empty());        // no spread at all
  EXPECT_TRUE(find_change_points(std::vector<double>{1, 2, 3, 4, 5}).empty());  // too short
}

// The busbw of trend_cli's 16 runs in a CI run of 2026-11-29 (its log): the uplinks slowed from
// run 9 (index 8, -12%), and runs 6-8 about 4% lower than 1-5 with nothing changed (the machine
// was busier). Both are significant; only the step is as large as --min-change's 5%.
TEST(ChangePoints, AShiftSmallerThanMinChangeIsNotAChangePointButTheStepBeyondItIs) {
  const std::vector<double> busbw{0.3362, 0.3363, 0.331,  0.3362, 0.3309, 0.3179, 0.3241, 0.3224,
                                  0.2836, 0.2829, 0.2828, 0.2789, 0.2822, 0.2842, 0.2817, 0.2826};
  const auto all = find_change_points(busbw);
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0].index, 5u);
  EXPECT_EQ(all[1].index, 8u);
  const auto large = find_change_points(busbw, {.min_change_pct = 5});
  ASSERT_EQ(large.size(), 1u);
  EXPECT_EQ(large[0].index, 8u);
  // Runs 1-8 alone: the drift is the best split; kept under a 3% bar, not under 5%.
  std::vector<double> drift_first(busbw.begin(), busbw.begin() + 8);
  EXPECT_TRUE(find_change_points(drift_first, {.min_change_pct = 5}).empty());
  EXPECT_EQ(find_change_points(drift_first, {.min_change_pct = 3}).size(), 1u);
}

TEST(ChangePoints, TheSameSeriesAndSeedGiveTheSameAnswer) {
  std::mt19937_64 random(9);
  auto series = noise(random, 30, 0, 1);
  for (std::size_t i = 15; i < 30; ++i) series[i] += 1.2;  // near the edge of significance
  const auto a = find_change_points(series, {.seed = 4});
  const auto b = find_change_points(series, {.seed = 4});
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].index, b[i].index);
    EXPECT_EQ(a[i].p, b[i].p);
  }
}

// Over many seeds: series of 30 runs with one planted shift (at a random run, of 1, 2 or 4
// standard deviations) or none. A found change point is right within one run of the planted
// one. Precision: the share of found points that are right; recall: the share of planted
// shifts found.
TEST(ChangePoints, PrecisionAndRecallOverManySeeds) {
  struct Tally {
    int planted = 0, found_right = 0, found = 0;
  };
  for (const double shift : {0.0, 1.0, 2.0, 4.0}) {
    Tally t;
    for (std::uint64_t seed = 1; seed <= 200; ++seed) {
      std::mt19937_64 random(seed * 7919 + static_cast<std::uint64_t>(shift * 10));
      auto series = noise(random, 30, 0, 1);
      const std::size_t at = 5 + random() % 21;
      if (shift > 0) {
        ++t.planted;
        for (std::size_t i = at; i < series.size(); ++i) series[i] += shift;
      }
      bool hit = false;
      for (const auto& c : find_change_points(series, {.max_p = 0.05, .seed = seed})) {
        ++t.found;
        const bool right = shift > 0 && (c.index + 1 >= at && c.index <= at + 1);
        if (right && !hit) {
          ++t.found_right;
          hit = true;
        }
      }
    }
    const double precision = t.found == 0 ? 1.0 : static_cast<double>(t.found_right) / t.found;
    const double recall = t.planted == 0 ? 1.0 : static_cast<double>(t.found_right) / t.planted;
    RecordProperty(
        fmt::format("shift_{}sd", shift),
        fmt::format("found {} precision {:.3f} recall {:.3f}", t.found, precision, recall));
    std::printf("shift %.0f sd: %d found, precision %.3f, recall %.3f\n", shift, t.found, precision,
                recall);
    if (shift == 0) {
      EXPECT_LE(t.found, 20) << "false change points in 200 stable series";
    }
    if (shift == 2) {
      // 0.80 at 0.05 by the permutation test alone (199 shuffles); with the t-test beside it
      // each test has half the p-value to spend, and no fewer false points were found.
      EXPECT_GE(recall, 0.75);
    }
    if (shift == 4) {
      EXPECT_GE(recall, 0.97);
      EXPECT_GE(precision, 0.9);
    }
  }
}

TEST(ChangePoints, BadOptionsAndValuesAreRefused) {
  const std::vector<double> ok(10, 1.0);
  EXPECT_THROW(find_change_points(ok, {.min_segment = 1}), Error);
  EXPECT_THROW(find_change_points(ok, {.max_p = 0}), Error);
  EXPECT_THROW(find_change_points(ok, {.permutations = 0}), Error);
  EXPECT_THROW(find_change_points(ok, {.min_change_pct = -1}), Error);
  std::vector<double> gap = ok;
  gap[3] = std::nan("");
  try {
    find_change_points(gap);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("value 3 is nan"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace rocehil::reports
