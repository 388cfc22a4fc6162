#pragma once

#include <span>

namespace rocehil::reports {

// Student's two-sample t-test with a pooled variance, two-sided: do two samples have the same
// mean? A trend uses it where a rank test has too few runs to say anything: three nights
// against three can never reach p < 0.1 by ranks alone, however large the step, while the size
// of a step against the nights' spread can. Its question is a change point's null hypothesis,
// "no change: every value from one distribution", under which the variances are equal too, so
// the pooled test is exact there (for normal values) and keeps n - 2 degrees of freedom where
// Welch's would spend them on a variance difference the null does not allow. A trend gives it
// the logarithms of positive values, as bandwidth and latency vary by ratios.
//
// Checked against SciPy's ttest_ind(equal_var=True) (tests/system/t_test_scipy.py).
struct TTest {
  double t = 0;        // (mean of a - mean of b) / its standard error
  double df = 0;       // n_a + n_b - 2
  double p_value = 1;  // two-sided
};

// Both samples with 2 values or more, all finite. When neither sample varies, the means either
// agree (p 1) or differ beyond any doubt the values leave (p 0, t infinite).
TTest pooled_t_test(std::span<const double> a, std::span<const double> b);

// The regularized incomplete beta function I_x(a, b), for x in [0, 1] and a, b > 0: the
// Student t distribution's tail is I_{df / (df + t^2)}(df / 2, 1 / 2). Exposed for its tests.
double regularized_incomplete_beta(double x, double a, double b);

}  // namespace rocehil::reports
