#include "rocehil/reports/bisection.hpp"

#include <fmt/format.h>

#include <set>
#include <sstream>

#include "rocehil/common/error.hpp"

namespace rocehil::reports {

Bisection::Range Bisection::range(const std::vector<std::string>& names) const {
  Range r{0, candidates - 1};  // the ends are known good and known bad
  for (const auto& [index, bad] : is_bad) {
    if (bad && index < r.first_bad) r.first_bad = index;
    if (!bad && index > r.last_good && index < candidates - 1) r.last_good = index;
  }
  for (const auto& [index, bad] : is_bad) {
    const bool good_above_bad = !bad && index > r.first_bad;
    const bool bad_at_start = bad && index == 0;
    if (good_above_bad || bad_at_start) {
      const auto name = [&](std::size_t i) { return i < names.size() ? names[i] : "?"; };
      throw input_error(
          bad_at_start
              ? fmt::format("bisect: the first candidate '{}' was bad; it must be known good",
                            name(0))
              : fmt::format("bisect: candidate '{}' was good but '{}' before it was bad: the "
                            "candidates are not ordered good to bad, or the result is not "
                            "repeatable (run the suite with repeats)",
                            name(index), name(r.first_bad)));
    }
  }
  return r;
}

std::optional<std::size_t> Bisection::next(const std::vector<std::string>& names) const {
  const Range r = range(names);
  if (r.first_bad - r.last_good <= 1) return std::nullopt;
  return r.last_good + (r.first_bad - r.last_good) / 2;
}

std::size_t Bisection::runs_needed(std::size_t candidates) {
  std::size_t runs = 0;
  for (std::size_t span = candidates - 1; span > 1; span = (span + 1) / 2) ++runs;
  return runs;
}

std::vector<std::string> parse_candidates(const std::string& text, const std::string& file) {
  std::vector<std::string> out;
  std::set<std::string> seen;
  std::istringstream in(text);
  int number = 0;
  for (std::string line; std::getline(in, line);) {
    ++number;
    if (const auto hash = line.find('#'); hash != std::string::npos) line.erase(hash);
    const auto first = line.find_first_not_of(" \t\r");
    if (first == std::string::npos) continue;
    line = line.substr(first, line.find_last_not_of(" \t\r") - first + 1);
    if (!seen.insert(line).second)
      throw input_error(
          fmt::format("{}:{}: candidate '{}' is listed twice (each must be one "
                      "distinct setting or version)",
                      file, number, line));
    out.push_back(line);
  }
  if (out.size() < 2)
    throw input_error(
        fmt::format("{}: {} candidate(s); a bisection needs the known good first, "
                    "the known bad last and any in between, one per line",
                    file, out.size()));
  return out;
}

}  // namespace rocehil::reports
