#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace rocehil::reports {

// Binary search for the first bad candidate in an ordered list (settings, firmware versions):
// the first is known good, the last known bad, and each verdict in between halves the range.
// Pure: the verdicts come from wherever they were recorded, so an interrupted bisection picks
// up where it stopped.
struct Bisection {
  std::size_t candidates = 0;          // at least 2
  std::map<std::size_t, bool> is_bad;  // index -> verdict, ends included or not

  // The good and bad indices that bound the first bad one: the highest good below the lowest
  // bad. Throws rocehil::Error (bad input) when a good one sits above a bad one: the candidates
  // are not ordered the way the search needs (or the fabric is flaky), and the message says
  // which.
  struct Range {
    std::size_t last_good = 0, first_bad = 0;
  };
  Range range(const std::vector<std::string>& names) const;

  // The candidate to try next (the middle of the range), or nothing when the range is narrowed
  // to neighbours: then range().first_bad is the answer.
  std::optional<std::size_t> next(const std::vector<std::string>& names) const;

  // Runs needed from nothing known but the ends: ceil(log2(candidates - 1)).
  static std::size_t runs_needed(std::size_t candidates);
};

// Reads a candidates file's text: one candidate per line, '#' comments and blank lines skipped,
// spaces around a candidate trimmed. Throws rocehil::Error (bad input) naming the file and line
// for a duplicate, and when fewer than 2 remain.
std::vector<std::string> parse_candidates(const std::string& text, const std::string& file);

}  // namespace rocehil::reports
