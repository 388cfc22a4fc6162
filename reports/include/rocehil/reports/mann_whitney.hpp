#pragma once

#include <span>

namespace rocehil::reports {

// The Mann-Whitney U test, two-sided: do two sets of repeat samples come from one distribution?
// A rank test, so one wild repeat cannot make a change look significant, and it assumes nothing
// about the shape of the distribution (busbw on a shared fabric is anything but normal).
//
// It follows SciPy's mannwhitneyu (method "auto", use_continuity=True), which the tests compare
// it with: the exact distribution of U when there are no ties and one sample has 8 values or
// fewer; otherwise the normal approximation with the tie correction and a continuity correction.
struct MannWhitney {
  double u = 0;        // U of the first sample: pairs (a, b) with a > b, ties counting 1/2
  double p_value = 1;  // two-sided
  bool exact = false;
};

// Both samples non-empty and finite (the caller drops what was not measured).
MannWhitney mann_whitney_u(std::span<const double> a, std::span<const double> b);

// The smallest two-sided p-value samples of these sizes can reach: with 3 repeats against 3 it
// is 0.1, so no change can be significant at 0.05 however large; the report says so.
double smallest_p_value(int n1, int n2);

}  // namespace rocehil::reports
