// For the reference comparison (change_points_reference.py): each input line is
// "MIN_SEGMENT PERMUTATIONS SEED MAX_P | v1 v2 ...". Output per line: the divergence of every split
// ("q" then n numbers), then the change points ("cp" then index:p pairs).
#include <fmt/format.h>

#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "rocehil/reports/change_points.hpp"

int main() {
  for (std::string line; std::getline(std::cin, line);) {
    const auto bar = line.find('|');
    if (bar == std::string::npos) return 2;
    std::istringstream head(line.substr(0, bar)), body(line.substr(bar + 1));
    rocehil::reports::ChangePointOptions options;
    head >> options.min_segment >> options.permutations >> options.seed >> options.max_p;
    std::vector<double> series;
    for (double v = 0; body >> v;) series.push_back(v);
    fmt::print("q");
    for (const double q : rocehil::reports::divergence_of_splits(series, options.min_segment))
      fmt::print(" {:.17g}", q);
    fmt::print("\ncp");
    for (const auto& c : rocehil::reports::find_change_points(series, options))
      fmt::print(" {}:{:.17g}", c.index, c.p);
    fmt::print("\n");
  }
  return 0;
}
