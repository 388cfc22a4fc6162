#include "runs/calibrate_text.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "rocehil/suites/suite.hpp"
#include "shared/text_table.hpp"

namespace rocehil::cli {

namespace {

// "12.31 Gbit/s ±0.4%": the median, and half the distance between its rounds' extremes.
std::string engine_cell(const std::optional<double>& median, const std::vector<double>& rounds,
                        const std::string& unit) {
  if (!median) return "-";  // the case ended before every round ran
  if (rounds.size() < 2) return fmt::format("{:.4g} {}", *median, unit);
  const auto [lo, hi] = std::minmax_element(rounds.begin(), rounds.end());
  return fmt::format("{:.4g} {} ±{:.1f}%", *median, unit,
                     *median > 0 ? 50.0 * (*hi - *lo) / *median : 0.0);
}

std::string upper(std::string text) {
  for (char& ch : text) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  return text;
}

}  // namespace

std::string render_calibration(const run::CalibrateOptions& o,
                               const std::vector<run::CalibrationRow>& rows) {
  std::string out = fmt::format(
      "\ncalibration: rocehil against perftest, {} -> {}, {} round(s) of each engine, "
      "interleaved\n",
      o.hosts.at(0), o.hosts.at(1), o.rounds);
  TextTable table({{"workload", TextTable::Align::left},
                   {"size"},
                   {"rocehil"},
                   {"perftest"},
                   {"ratio"},
                   {"within", TextTable::Align::left},
                   {"verdict", TextTable::Align::left}});
  for (const auto& r : rows) {
    const double tolerance = r.workload == "bw" ? o.bw_tolerance : o.lat_tolerance;
    table.add_row({r.workload, suites::size_label(r.size),
                   engine_cell(r.rocehil_median, r.rocehil, r.unit),
                   engine_cell(r.perftest_median, r.perftest, r.unit),
                   r.ratio ? fmt::format("{:.3f}", *r.ratio) : "-",
                   fmt::format("±{:g}%", 100 * tolerance), upper(r.outcome)});
  }
  out += table.render();
  for (const auto& r : rows)
    if (!r.detail.empty())
      out += fmt::format("  {} {}: {}\n", r.workload, suites::size_label(r.size), r.detail);
  if (std::any_of(rows.begin(), rows.end(), [](const auto& r) { return r.outcome == "fail"; }))
    out +=
        "  A disagreement usually has a cause outside the fabric: README \"Calibration "
        "against perftest\" lists what to compare (CPU binding, TX depth, inline, MTU).\n";
  return out;
}

}  // namespace rocehil::cli
