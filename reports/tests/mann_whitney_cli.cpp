// For the SciPy comparison (mann_whitney_scipy.py): each input line is two samples separated by
// '|', values separated by spaces; each output line is "U p exact".
#include <fmt/format.h>

#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "rocehil/reports/mann_whitney.hpp"

namespace {

std::vector<double> numbers(const std::string& text) {
  std::istringstream in(text);
  std::vector<double> out;
  for (double v = 0; in >> v;) out.push_back(v);
  return out;
}

}  // namespace

int main() {
  for (std::string line; std::getline(std::cin, line);) {
    const auto bar = line.find('|');
    if (bar == std::string::npos) return 2;
    const auto a = numbers(line.substr(0, bar)), b = numbers(line.substr(bar + 1));
    const auto r = rocehil::reports::mann_whitney_u(a, b);
    fmt::print("{:.17g} {:.17g} {}\n", r.u, r.p_value, r.exact ? 1 : 0);
  }
  return 0;
}
