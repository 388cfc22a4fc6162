#include "rocehil/run/fairness.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace rocehil::run {

double jain_index(std::span<const double> rates) {
  double sum = 0, squares = 0;
  for (const double x : rates) {
    sum += x;
    squares += x * x;
  }
  if (rates.empty() || squares == 0) return 0;
  return sum * sum / (static_cast<double>(rates.size()) * squares);
}

double largest_deviation(std::span<const double> rates) {
  if (rates.empty()) return 0;
  double sum = 0;
  for (const double x : rates) sum += x;
  const double mean = sum / static_cast<double>(rates.size());
  if (mean == 0) return 0;
  double most = 0;
  for (const double x : rates) most = std::max(most, std::abs(x - mean));
  return most / mean;
}

void add_fairness(suites::Measured& m, std::span<const double> rates, std::string_view flows,
                  const std::string& why_not) {
  std::string why = why_not;
  if (why.empty() && rates.size() < 2)
    why = fmt::format("it compares the rates of two or more {}; this case has {}", flows,
                      rates.size());
  if (why.empty() && std::all_of(rates.begin(), rates.end(), [](double x) { return x == 0; }))
    why = fmt::format("none of the {} moved a byte: no share to compare", flows);
  if (!why.empty()) {
    m.absent("fairness_jain", why);
    m.absent("rate_deviation", why);
    return;
  }
  m.values["fairness_jain"] = jain_index(rates);
  m.values["rate_deviation"] = largest_deviation(rates);
}

}  // namespace rocehil::run
