// Student's pooled two-sample t-test (see the header). The t distribution's tail comes from the
// regularized incomplete beta function, evaluated by its continued fraction (DLMF 8.17.22) with the
// modified Lentz method; the symmetry I_x(a, b) = 1 - I_{1-x}(b, a) keeps x where the fraction
// converges quickly (x < (a + 1) / (a + b + 2)).
#include "rocehil/reports/t_test.hpp"

#include <cmath>
#include <limits>
#include <numeric>

#include "rocehil/common/error.hpp"

namespace rocehil::reports {

namespace {

// The continued fraction of I_x(a, b) without its prefactor: 1 / (1 + d1 / (1 + d2 / (1 + ...)))
// with d_{2m+1} = -(a+m)(a+b+m) x / ((a+2m)(a+2m+1)) and d_{2m} = m(b-m) x / ((a+2m-1)(a+2m)).
double beta_fraction(double x, double a, double b) {
  constexpr double tiny = 1e-300, epsilon = 1e-15;
  double c = 1, d = 1 - (a + b) * x / (a + 1);
  if (std::abs(d) < tiny) d = tiny;
  d = 1 / d;
  double f = d;
  for (int m = 1; m <= 10'000; ++m) {
    const double even = m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m));
    d = 1 + even * d;
    c = 1 + even / c;
    if (std::abs(d) < tiny) d = tiny;
    if (std::abs(c) < tiny) c = tiny;
    d = 1 / d;
    f *= d * c;
    const double odd = -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1));
    d = 1 + odd * d;
    c = 1 + odd / c;
    if (std::abs(d) < tiny) d = tiny;
    if (std::abs(c) < tiny) c = tiny;
    d = 1 / d;
    const double step = d * c;
    f *= step;
    if (std::abs(step - 1) < epsilon) break;
  }
  return f;
}

struct Moments {
  double n = 0, mean = 0, variance = 0;  // variance with n - 1
};

Moments moments_of(std::span<const double> v) {
  Moments m;
  m.n = static_cast<double>(v.size());
  m.mean = std::accumulate(v.begin(), v.end(), 0.0) / m.n;
  double squares = 0;
  for (const double x : v) squares += (x - m.mean) * (x - m.mean);
  m.variance = squares / (m.n - 1);
  return m;
}

}  // namespace

double regularized_incomplete_beta(double x, double a, double b) {
  if (!(x >= 0 && x <= 1) || !(a > 0) || !(b > 0))
    throw input_error("incomplete beta: x must lie in [0, 1] and a, b be positive");
  if (x == 0 || x == 1) return x;
  // log of x^a (1-x)^b / (a B(a, b))
  const double front =
      std::lgamma(a + b) - std::lgamma(a) - std::lgamma(b) + a * std::log(x) + b * std::log1p(-x);
  if (x < (a + 1) / (a + b + 2)) return std::exp(front) * beta_fraction(x, a, b) / a;
  return 1 - std::exp(front) * beta_fraction(1 - x, b, a) / b;
}

TTest pooled_t_test(std::span<const double> a, std::span<const double> b) {
  if (a.size() < 2 || b.size() < 2)
    throw input_error("t-test: each sample needs 2 values or more (a variance)");
  for (const auto sample : {a, b})
    for (const double x : sample)
      if (!std::isfinite(x)) throw input_error("t-test: a value is not finite");
  const Moments x = moments_of(a), y = moments_of(b);
  TTest out;
  out.df = x.n + y.n - 2;
  const double pooled = ((x.n - 1) * x.variance + (y.n - 1) * y.variance) / out.df;
  const double se2 = pooled * (1 / x.n + 1 / y.n);
  if (se2 == 0) {
    if (x.mean == y.mean) return out;
    out.t = x.mean > y.mean ? std::numeric_limits<double>::infinity()
                            : -std::numeric_limits<double>::infinity();
    out.p_value = 0;
    return out;
  }
  out.t = (x.mean - y.mean) / std::sqrt(se2);
  out.p_value = regularized_incomplete_beta(out.df / (out.df + out.t * out.t), out.df / 2, 0.5);
  return out;
}

}  // namespace rocehil::reports
