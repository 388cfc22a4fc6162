// For the SciPy comparison (t_test_scipy.py): each input line is "a1 a2 ... | b1 b2 ...";
// each output line "T DF P" of Student's pooled t-test on the two samples.
#include <fmt/format.h>

#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "rocehil/reports/t_test.hpp"

int main() {
  for (std::string line; std::getline(std::cin, line);) {
    const auto bar = line.find('|');
    if (bar == std::string::npos) return 2;
    std::istringstream left(line.substr(0, bar)), right(line.substr(bar + 1));
    std::vector<double> a, b;
    for (double v = 0; left >> v;) a.push_back(v);
    for (double v = 0; right >> v;) b.push_back(v);
    const auto w = rocehil::reports::pooled_t_test(a, b);
    fmt::print("{:.17g} {:.17g} {:.17g}\n", w.t, w.df, w.p_value);
  }
  return 0;
}
