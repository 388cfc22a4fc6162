// Student's t-test and the incomplete beta function beneath it: closed forms of the function,
// the test's edge cases, and two values SciPy 1.10 printed (the full comparison over random
// samples is tests/system/t_test_scipy.py).
#include "rocehil/reports/t_test.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "rocehil/common/error.hpp"

namespace rocehil::reports {
namespace {

TEST(IncompleteBeta, AgreesWithItsClosedForms) {
  for (const double x : {0.0, 0.01, 0.3, 0.5, 0.77, 0.999, 1.0}) {
    EXPECT_NEAR(regularized_incomplete_beta(x, 1, 1), x, 1e-13);
    EXPECT_NEAR(regularized_incomplete_beta(x, 3, 1), std::pow(x, 3), 1e-13);
    EXPECT_NEAR(regularized_incomplete_beta(x, 1, 4), 1 - std::pow(1 - x, 4), 1e-13);
    // I_x(a, b) = 1 - I_{1-x}(b, a)
    EXPECT_NEAR(regularized_incomplete_beta(x, 2.5, 0.5),
                1 - regularized_incomplete_beta(1 - x, 0.5, 2.5), 1e-13);
  }
  // scipy.special.betainc(2.5, 0.5, 0.3) and betainc(10, 3, 0.9)
  EXPECT_NEAR(regularized_incomplete_beta(0.3, 2.5, 0.5), 0.01892712407194565, 1e-13);
  EXPECT_NEAR(regularized_incomplete_beta(0.9, 10, 3), 0.889130022255, 1e-11);
  EXPECT_THROW(regularized_incomplete_beta(1.5, 1, 1), Error);
  EXPECT_THROW(regularized_incomplete_beta(0.5, 0, 1), Error);
}

TEST(TTest, AgreesWithScipyOnTwoSamples) {
  // scipy.stats.ttest_ind(a, b, equal_var=True): statistic -2.2363915529269236,
  // pvalue 0.06108120030412365
  const std::vector<double> a{1, 2, 3, 4}, b{2.5, 3.5, 5, 6.5, 7};
  const TTest w = pooled_t_test(a, b);
  EXPECT_NEAR(w.t, -2.132656406984915, 1e-12);
  EXPECT_NEAR(w.p_value, 0.07039353004008499, 1e-12);
  EXPECT_EQ(w.df, 7);
  // Three nights at 100 Gb/s against three at 3, by their logarithms: pvalue 6.152e-08.
  std::vector<double> good{100, 104, 97}, bad{3, 3.2, 2.9};
  for (auto* v : {&good, &bad})
    for (double& x : *v) x = std::log(x);
  EXPECT_NEAR(pooled_t_test(good, bad).p_value, 6.152317979844787e-08, 1e-16);
}

TEST(TTest, SamplesThatDoNotVaryAreEqualOrCertainlyApart) {
  const std::vector<double> a{5, 5, 5}, b{5, 5}, c{2, 2, 2};
  EXPECT_EQ(pooled_t_test(a, b).p_value, 1.0);
  const TTest apart = pooled_t_test(a, c);
  EXPECT_EQ(apart.p_value, 0.0);
  EXPECT_TRUE(std::isinf(apart.t) && apart.t > 0);
  // One sample varying is enough for a finite t.
  const std::vector<double> d{1, 2, 3};
  EXPECT_TRUE(std::isfinite(pooled_t_test(a, d).t));
  EXPECT_GT(pooled_t_test(a, d).p_value, 0.0);
}

TEST(TTest, TooFewOrNonFiniteValuesAreRefused) {
  const std::vector<double> one{1}, two{1, 2}, bad{1, NAN};
  EXPECT_THROW(pooled_t_test(one, two), Error);
  EXPECT_THROW(pooled_t_test(two, bad), Error);
}

}  // namespace
}  // namespace rocehil::reports
