#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace rocehil::reports {

// Charts for report.html. Each function returns one self-contained <svg> element: inline
// attributes only (no CSS, scripts, fonts or external references), a <title> for screen
// readers, text XML-escaped, so the report can paste it into the page as it is. Values that
// are NaN or infinite are left out, never drawn at a made-up place; a chart with nothing to draw
// is a small SVG that says "no data". Sizes are in CSS pixels.

struct Point {
  double x = 0;
  double y = 0;
};

struct LineSeries {
  std::string name{};           // the legend entry, e.g. "qps=8"
  std::vector<Point> points{};  // drawn in order of x; a point with a non-finite y breaks the line
  std::vector<std::string> links{};  // empty, or one per point: where clicking the point goes
};

enum class XAxis {
  linear,
  log2_bytes,  // message sizes: powers of two, labelled in binary units (4K, 64K, 1M)
};

// A vertical dashed line across the plot at x, labelled at its top: a change point in a trend.
struct Marker {
  double x = 0;
  std::string label{};
};

// busbw against message size, one series per QP count. The y axis starts at 0 (or below, for
// negative values) and ends on a 1, 2 or 5 x 10^k tick above the largest value.
struct LineChart {
  std::string title{};
  std::string x_title{};
  std::string y_title{};
  XAxis x_axis = XAxis::linear;
  std::vector<LineSeries> series{};
  std::vector<Marker> markers{};  // outside the x range: not drawn
  // With XAxis::linear, when set: x is a position 1..n and a tick at position i reads
  // x_positions[i - 1] (a run's date in a trend) instead of the number.
  std::vector<std::string> x_positions{};
  double width = 640;
  double height = 360;
};
std::string line_chart(const LineChart& chart);

struct Bar {
  std::string label{};
  double value = 0;
  bool highlight = false;  // drawn in the warning colour: a spine far from the mean
};

// Horizontal bars from 0, in the given order (per-spine bytes, per-QP rates): the label left of
// the bar, the value at its end. Bar lengths are proportional to the values.
struct BarChart {
  std::string title{};
  std::string value_title{};  // under the bars, e.g. "bytes sent per spine"
  std::string value_unit{};   // value labels take SI prefixes: "B" prints 1.23 GB; "" bare numbers
  std::vector<Bar> bars{};
  std::optional<double> reference{};  // a dashed line across the bars, e.g. the mean
  std::string reference_label = "mean";
  double width = 640;  // the height follows from the number of bars
};
std::string bar_chart(const BarChart& chart);

struct TimelineSeries {
  std::string name{};
  std::vector<double> values{};  // values[i] covers [i * bin_ms, (i + 1) * bin_ms); NaN: a gap
};

enum class TimelineStyle {
  steps,  // each bin a flat segment: counts per bin (CNPs, XOFF frames)
  lines,  // a line through the bins' midpoints: a sampled rate
};

enum class TimeUnit {
  automatic,  // seconds once the timeline spans 2 s or more, else milliseconds
  ms,
  s,
};

// Values over equally spaced time bins, the first starting at start_ms (0, or where bin 0 falls
// on another chart's clock: a case's traffic start, so its charts share one time axis).
struct TimelineChart {
  std::string title{};
  std::string y_title{};
  double bin_ms = 1;
  std::vector<TimelineSeries> series{};
  TimelineStyle style = TimelineStyle::steps;
  TimeUnit time_unit = TimeUnit::automatic;
  double start_ms = 0;
  std::string x_title{};          // "time (s)" or "time (ms)" when empty, by the unit
  std::vector<Marker> markers{};  // x in ms on the chart's clock; outside the bins: not drawn
  double width = 640;
  double height = 300;
};
std::string timeline_chart(const TimelineChart& chart);

// A histogram of samples (collective iteration times) with markers at p50 and p99. Bins follow
// Freedman-Diaconis (width 2 IQR / n^(1/3)), or sqrt(n) bins when the IQR is 0, at most
// max_bins. Percentiles are nearest-rank: the ceil(p/100 * n)-th smallest sample, so a marker
// always sits on a value that was measured (p50 of 1..100 is 50, p99 is 99).
struct Distribution {
  std::string title{};
  std::string x_title{};  // e.g. "iteration time (us)"
  std::vector<double> samples{};
  std::size_t max_bins = 40;
  double width = 640;
  double height = 300;
};
std::string distribution_chart(const Distribution& chart);

struct CellIndex {
  std::size_t row = 0;
  std::size_t column = 0;
};

// A matrix of values, e.g. rank-to-rank bandwidth. Colour runs light to dark blue from the
// smallest to the largest finite value; a NaN or missing cell is grey and has no value. With 16
// columns or fewer each cell prints its value. Every cell has a tooltip "row -> column: value";
// outlier cells get a red outline and "(outlier)" in theirs.
struct Heatmap {
  std::string title{};
  std::vector<std::string> row_labels{};      // a missing label prints as the row's index
  std::vector<std::string> column_labels{};   // likewise
  std::vector<std::vector<double>> values{};  // values[row][column]; a short row's end is missing
  std::vector<CellIndex> outliers{};
  std::string value_unit{};  // in tooltips and the colour legend, with SI prefixes ("Gbps")
  double width = 640;        // cells are square, at most 48 px; the height follows
};
std::string heatmap(const Heatmap& chart);

}  // namespace rocehil::reports
