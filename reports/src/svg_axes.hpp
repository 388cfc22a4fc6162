#pragma once

// Private to the reports library: the SVG writer and what every chart in svg_chart.cpp shares
// (ticks, scales, number formats, colours, axes, legend).

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace rocehil::reports::svg {

inline constexpr std::string_view kPlotBackground = "#fafafa";
inline constexpr std::string_view kGrid = "#e4e4e4";
inline constexpr std::string_view kAxis = "#555";
inline constexpr std::string_view kText = "#222";
inline constexpr std::string_view kBar = "#4c78a8";
inline constexpr std::string_view kWarning = "#d62728";
inline constexpr std::string_view kMissing = "#c8c8c8";
inline constexpr std::string_view kMarker = "#333";
inline constexpr std::string_view kOutlierOutline = R"(stroke="#d62728" stroke-width="2")";

// Okabe-Ito colours (told apart with the common colour-vision deficiencies), cycling.
std::string_view series_colour(std::size_t index);
// t in [0, 1] -> light (#f7fbff) to dark (#08306b) blue; every channel falls as t grows, so a
// larger value is always a darker cell.
std::string sequential_blue(double t);

// Ticks 1, 2 or 5 x 10^k apart, about `target` of them, from at or below lo to at or above hi.
// lo == hi is widened so the axis has a length. whole_numbers: never a step below 1 (counts).
std::vector<double> nice_ticks(double lo, double hi, int target = 5, bool whole_numbers = false);
// Powers of two from lo to hi (both powers of two), thinned to at most max_ticks by taking
// every 2nd, 3rd... exponent, so the same sizes are labelled on every chart.
std::vector<double> log2_ticks(double lo, double hi, std::size_t max_ticks = 8);
// Labels for evenly spaced ticks: as many decimals as the step needs, k/M/G past 10^4.
std::vector<std::string> tick_labels(const std::vector<double>& ticks);
// 4096 -> "4K", 1572864 -> "1.5M": binary units, as message sizes are powers of two.
std::string format_binary(double value);
// A value for a label: "1.23 GB" with a unit (common's format_si), "12.5" or "12.3k" without.
std::string format_value(double value, std::string_view unit);
// Nearest rank: the ceil(percent/100 * n)-th smallest of `sorted` (non-empty, ascending).
double nearest_rank(std::span<const double> sorted, double percent);

// The range of the finite values seen, if any.
struct Extent {
  double lo = std::numeric_limits<double>::infinity();
  double hi = -std::numeric_limits<double>::infinity();
  void add(double v) {
    if (!std::isfinite(v)) return;
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  bool empty() const { return lo > hi; }
};

struct Histogram {
  double lo = 0, width = 1;  // bin i is [lo + i * width, lo + (i + 1) * width), the last closed
  std::vector<std::size_t> counts;
  double edge(std::size_t i) const { return lo + width * static_cast<double>(i); }
};
// Freedman-Diaconis bins of `sorted` (non-empty, ascending, finite), sqrt(n) bins when the IQR
// is 0, at most max_bins; one bin around the value when all samples are equal.
Histogram histogram(std::span<const double> sorted, std::size_t max_bins);

// Domain to pixels, linear or in log2 of the value. pixel_lo may be larger than pixel_hi (a y
// axis grows upwards).
struct Scale {
  double lo = 0, hi = 1;
  double pixel_lo = 0, pixel_hi = 1;
  bool log2 = false;
  double operator()(double value) const;
};

// The plot area in pixels.
struct Frame {
  double left = 0, top = 0, right = 0, bottom = 0;
  double width() const { return right - left; }
  double height() const { return bottom - top; }
};

// Text width estimate for sans-serif: layout needs it and SVG cannot measure without a browser.
double text_width(std::string_view text, double font_size = 11);
// `text` cut to about max_width pixels, ending in an ellipsis when cut.
std::string fit_text(std::string_view text, double max_width, double font_size = 11);

// Appends elements to one <svg> document. The `attrs` arguments are raw attribute text and take
// only constants from this code; anything from data goes through the escaped parameters.
class Svg {
 public:
  Svg(double width, double height, std::string_view title);
  void line(double x1, double y1, double x2, double y2, std::string_view stroke,
            std::string_view attrs = {});
  void rect(double x, double y, double w, double h, std::string_view fill,
            std::string_view attrs = {}, std::string_view tooltip = {});
  void circle(double cx, double cy, double r, std::string_view fill, std::string_view tooltip = {});
  void path(std::string_view d, std::string_view stroke, std::string_view attrs = {});
  void text(double x, double y, std::string_view content, std::string_view attrs = {});
  // What is drawn between the two is a link to `href` (escaped here).
  void open_link(std::string_view href);
  void close_link();
  std::string finish() &&;

 private:
  void end(std::string_view element, std::string_view tooltip);
  std::string out_;
};

struct Axis {
  Scale scale;
  std::vector<double> ticks;
  std::vector<std::string> labels;  // one per tick
  std::string_view title;
};

// An axis over [lo, hi] widened to nice ticks. A value axis passes min(0, lo) and max(0, hi)
// so that bars and lines are measured from 0.
Axis linear_axis(double lo, double hi, std::string_view title, bool whole_numbers = false);
// An axis over [lo, hi] (both > 0) widened to powers of two, ticks labelled 4K, 64K, 1M.
Axis log2_axis(double lo, double hi, std::string_view title);
// The plot area of an x/y chart with a legend this wide on its right; sets the scales' pixels.
Frame plot_frame(double width, double height, double legend, Axis& x, Axis& y);

// Plot background, grid lines at the ticks, tick labels and axis titles.
void draw_axes(Svg& svg, const Frame& frame, const Axis& x, const Axis& y);
// Width the legend of these names takes right of the plot; 0 for none.
double legend_width(const std::vector<std::string_view>& names);
// One row per name, a line in the series' colour, from (x, y) down.
void draw_legend(Svg& svg, double x, double y, const std::vector<std::string_view>& names);
// The left margin an axis with these tick labels and a rotated title needs.
double left_margin(const std::vector<std::string>& y_labels);

// Under a heatmap: the colour scale from the smallest to the largest value, then swatches for
// the cells without a colour of their own (no value, outlier) when there are any.
void heatmap_legend(Svg& svg, double x, double y, const Extent& range, std::string_view unit,
                    bool missing, bool outliers);

std::string no_data(std::string_view title, double width);

}  // namespace rocehil::reports::svg
