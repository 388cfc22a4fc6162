#include "rocehil/reports/svg_chart.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>

#include "svg_axes.hpp"

namespace rocehil::reports {
namespace {

using svg::Axis;
using svg::Extent;
using svg::Frame;
using svg::Scale;
using svg::Svg;

std::string_view or_default(const std::string& title, std::string_view fallback) {
  return title.empty() ? fallback : std::string_view(title);
}

// A value axis: from 0, or below it for negative data, to a nice tick past the largest value.
Axis value_axis(const Extent& e, std::string_view title) {
  return svg::linear_axis(std::min(0.0, e.lo), std::max(0.0, e.hi), title);
}

std::vector<std::string_view> names_of(const auto& series) {
  std::vector<std::string_view> names;
  for (const auto& s : series) names.push_back(s.name);
  return names;
}

std::string label_at(const std::vector<std::string>& labels, std::size_t i) {
  return i < labels.size() ? labels[i] : std::to_string(i);
}

bool placeable_x(double x, XAxis axis) {
  return std::isfinite(x) && (axis == XAxis::linear || x > 0);
}

// Markers on every drawable point; lines through runs of them, broken where y is not finite.
// The name of an x position: its label when the chart names positions, else the number.
std::string x_text(double x, XAxis axis, const std::vector<std::string>& positions) {
  if (axis == XAxis::log2_bytes) return svg::format_binary(x);
  const double i = std::round(x);
  if (!positions.empty() && i == x && i >= 1 && i <= static_cast<double>(positions.size()))
    return positions[static_cast<std::size_t>(i) - 1];
  return svg::format_value(x, "");
}

void draw_line_series(Svg& svg, const LineSeries& s, std::string_view colour, const Axis& x,
                      const Axis& y, XAxis axis, const std::vector<std::string>& positions) {
  std::vector<std::size_t> order;  // the placeable points, by x
  for (std::size_t i = 0; i < s.points.size(); ++i)
    if (placeable_x(s.points[i].x, axis)) order.push_back(i);
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return s.points[a].x < s.points[b].x; });
  std::string d;
  bool pen_down = false;
  for (const std::size_t i : order) {
    const Point& p = s.points[i];
    if (!std::isfinite(p.y)) {
      pen_down = false;
      continue;
    }
    fmt::format_to(std::back_inserter(d), "{}{:.1f} {:.1f}", pen_down ? " L" : " M", x.scale(p.x),
                   y.scale(p.y));
    pen_down = true;
  }
  if (!d.empty()) svg.path(d, colour);
  const bool linked = s.links.size() == s.points.size();
  for (const std::size_t i : order) {
    const Point& p = s.points[i];
    if (!std::isfinite(p.y)) continue;
    const std::string where = x_text(p.x, axis, positions);
    if (linked) svg.open_link(s.links[i]);
    svg.circle(x.scale(p.x), y.scale(p.y), linked ? 3.5 : 2.5, colour,
               fmt::format("{}: {}, {}", s.name, where, svg::format_value(p.y, "")));
    if (linked) svg.close_link();
  }
}

// A dashed line across the plot at px, its label at the top: an event or a change point.
void draw_event_marker(Svg& svg, const Frame& f, double px, const std::string& label) {
  svg.line(px, f.top, px, f.bottom, svg::kWarning, R"(stroke-dasharray="4 3")");
  svg.text(px + 3, f.top + 10, svg::fit_text(label, 120, 10),
           fmt::format(R"(font-size="10" fill="{}")", svg::kWarning));
}

}  // namespace

std::string line_chart(const LineChart& chart) {
  const std::string_view title = or_default(chart.title, "line chart");
  Extent xs, ys;
  for (const auto& s : chart.series)
    for (const auto& p : s.points)
      if (placeable_x(p.x, chart.x_axis) && std::isfinite(p.y)) {
        xs.add(p.x);
        ys.add(p.y);
      }
  if (ys.empty()) return svg::no_data(title, chart.width);

  const bool named = chart.x_axis == XAxis::linear && !chart.x_positions.empty();
  Axis x = chart.x_axis == XAxis::log2_bytes
               ? svg::log2_axis(xs.lo, xs.hi, chart.x_title)
               : svg::linear_axis(xs.lo, xs.hi, chart.x_title, /*whole_numbers=*/named);
  if (named)
    for (std::size_t i = 0; i < x.ticks.size(); ++i) {
      const double t = x.ticks[i];
      x.labels[i] = t >= 1 && t <= static_cast<double>(chart.x_positions.size())
                        ? chart.x_positions[static_cast<std::size_t>(t) - 1]
                        : std::string();
    }
  Axis y = value_axis(ys, chart.y_title);
  const auto names = names_of(chart.series);
  const Frame f = svg::plot_frame(chart.width, chart.height, svg::legend_width(names), x, y);

  Svg svg(chart.width, chart.height, title);
  svg::draw_axes(svg, f, x, y);
  for (const Marker& m : chart.markers) {
    if (!placeable_x(m.x, chart.x_axis) || m.x < x.scale.lo || m.x > x.scale.hi) continue;
    const double px = x.scale(m.x);
    draw_event_marker(svg, f, px, m.label);
  }
  for (std::size_t i = 0; i < chart.series.size(); ++i)
    draw_line_series(svg, chart.series[i], svg::series_colour(i), x, y, chart.x_axis,
                     chart.x_positions);
  svg::draw_legend(svg, f.right + 12, f.top, names);
  return std::move(svg).finish();
}

std::string timeline_chart(const TimelineChart& chart) {
  const std::string_view title = or_default(chart.title, "timeline");
  Extent ys;
  std::size_t bins = 0;
  for (const auto& s : chart.series) {
    for (double v : s.values) ys.add(v);
    bins = std::max(bins, s.values.size());
  }
  if (ys.empty() || !(chart.bin_ms > 0) || !std::isfinite(chart.bin_ms))
    return svg::no_data(title, chart.width);

  const double span_ms = static_cast<double>(bins) * chart.bin_ms;
  const bool seconds =
      chart.time_unit == TimeUnit::s || (chart.time_unit == TimeUnit::automatic && span_ms >= 2000);
  const double per_unit = seconds ? 1000 : 1;  // ms in one axis unit
  const double from_ms = std::isfinite(chart.start_ms) ? chart.start_ms : 0;
  // The axis keeps a view of its title: a named string, not a temporary.
  const std::string x_title =
      !chart.x_title.empty() ? chart.x_title : (seconds ? "time (s)" : "time (ms)");
  Axis x = svg::linear_axis(from_ms / per_unit, (from_ms + span_ms) / per_unit, x_title);
  Axis y = value_axis(ys, chart.y_title);
  const auto names = names_of(chart.series);
  const Frame f = svg::plot_frame(chart.width, chart.height, svg::legend_width(names), x, y);

  Svg svg(chart.width, chart.height, title);
  svg::draw_axes(svg, f, x, y);
  for (const Marker& m : chart.markers) {
    if (!std::isfinite(m.x) || m.x < from_ms || m.x > from_ms + span_ms) continue;
    const double px = x.scale(m.x / per_unit);
    draw_event_marker(svg, f, px, m.label);
  }
  const bool steps = chart.style == TimelineStyle::steps;
  for (std::size_t i = 0; i < chart.series.size(); ++i) {
    const auto& values = chart.series[i].values;
    auto at = [&](double bin) { return x.scale((from_ms + bin * chart.bin_ms) / per_unit); };
    std::string d;
    bool pen_down = false;
    for (std::size_t b = 0; b < values.size(); ++b) {
      if (!std::isfinite(values[b])) {
        pen_down = false;  // a gap: the bin was not measured
        continue;
      }
      const auto start = static_cast<double>(b);
      const double px = steps ? at(start) : at(start + 0.5);
      fmt::format_to(std::back_inserter(d), "{}{:.1f} {:.1f}", pen_down ? " L" : " M", px,
                     y.scale(values[b]));
      if (steps) fmt::format_to(std::back_inserter(d), " H{:.1f}", at(start + 1));
      // A lone midpoint draws nothing as a path; a dot keeps the value visible.
      const bool alone = !pen_down && (b + 1 == values.size() || !std::isfinite(values[b + 1]));
      if (!steps && alone) svg.circle(px, y.scale(values[b]), 2, svg::series_colour(i));
      pen_down = true;
    }
    if (!d.empty()) svg.path(d, svg::series_colour(i));
  }
  svg::draw_legend(svg, f.right + 12, f.top, names);
  return std::move(svg).finish();
}

std::string distribution_chart(const Distribution& chart) {
  std::vector<double> sorted;
  for (double v : chart.samples)
    if (std::isfinite(v)) sorted.push_back(v);
  if (sorted.empty()) return svg::no_data(or_default(chart.title, "distribution"), chart.width);
  std::sort(sorted.begin(), sorted.end());
  const double p50 = svg::nearest_rank(sorted, 50), p99 = svg::nearest_rank(sorted, 99);
  const svg::Histogram h = svg::histogram(sorted, chart.max_bins);

  Axis x = svg::linear_axis(h.edge(0), h.edge(h.counts.size()), chart.x_title);
  const auto most = *std::max_element(h.counts.begin(), h.counts.end());
  Axis y = svg::linear_axis(0, static_cast<double>(most), "samples", true);
  const Frame f = svg::plot_frame(chart.width, chart.height, 0, x, y);

  const std::string title =
      fmt::format("{} (n={}, p50 {}, p99 {})", or_default(chart.title, "distribution"),
                  sorted.size(), svg::format_value(p50, ""), svg::format_value(p99, ""));
  Svg svg(chart.width, chart.height, title);
  svg::draw_axes(svg, f, x, y);
  for (std::size_t i = 0; i < h.counts.size(); ++i) {
    if (h.counts[i] == 0) continue;
    const double x0 = x.scale(h.edge(i)), x1 = x.scale(h.edge(i + 1));
    const double top = y.scale(static_cast<double>(h.counts[i]));
    svg.rect(x0 + 0.5, top, x1 - x0 - 1, f.bottom - top, svg::kBar, {},
             fmt::format("[{}, {}): {}", svg::format_value(h.edge(i), ""),
                         svg::format_value(h.edge(i + 1), ""), h.counts[i]));
  }
  // Labels stacked so that p50 and p99 close together stay readable.
  const std::pair<std::string_view, double> markers[] = {{"p50", p50}, {"p99", p99}};
  for (std::size_t k = 0; k < 2; ++k) {
    const double px = x.scale(markers[k].second);
    svg.line(px, f.top, px, f.bottom, svg::kMarker, R"(stroke-dasharray="4 3")");
    const bool flip = px > f.right - 70;  // near the right edge the label goes left of the line
    svg.text(flip ? px - 3 : px + 3, f.top + 12 + 13 * static_cast<double>(k),
             fmt::format("{} {}", markers[k].first, svg::format_value(markers[k].second, "")),
             flip ? R"(text-anchor="end")" : "");
  }
  return std::move(svg).finish();
}

std::string bar_chart(const BarChart& chart) {
  const std::string_view title = or_default(chart.title, "bar chart");
  Extent range;
  for (const auto& b : chart.bars) range.add(b.value);
  if (range.empty()) return svg::no_data(title, chart.width);
  const bool reference = chart.reference && std::isfinite(*chart.reference);
  if (reference) range.add(*chart.reference);

  // Labels are measured first: the bars get the width the text leaves them.
  std::vector<std::string> shown;
  double label_w = 0, value_w = 0;
  for (const auto& b : chart.bars) {
    shown.push_back(std::isfinite(b.value) ? svg::format_value(b.value, chart.value_unit)
                                           : "no value");
    label_w = std::max(label_w, svg::text_width(b.label));
    value_w = std::max(value_w, svg::text_width(shown.back()));
  }
  label_w = std::min(label_w, chart.width * 0.35);
  constexpr double pitch = 22, thickness = 14;
  const double top = reference ? 48 : 32;
  const double bars_bottom = top + pitch * static_cast<double>(chart.bars.size());
  const double height = bars_bottom + (chart.value_title.empty() ? 12 : 32);
  // The domain is the data's own, not widened to a tick, so lengths compare exactly.
  Scale x{.lo = std::min(0.0, range.lo),
          .hi = std::max(0.0, range.hi),
          .pixel_lo = 14 + label_w,
          .pixel_hi = chart.width - 12 - value_w};
  if (x.lo == x.hi) x.hi = x.lo + 1;  // all zero

  Svg svg(chart.width, height, title);
  const double zero = x(0);
  for (std::size_t i = 0; i < chart.bars.size(); ++i) {
    const Bar& b = chart.bars[i];
    const double y = top + pitch * static_cast<double>(i) + (pitch - thickness) / 2;
    const double baseline = y + thickness / 2 + 4;
    svg.text(x.pixel_lo - 6, baseline, svg::fit_text(b.label, label_w), R"(text-anchor="end")");
    if (!std::isfinite(b.value)) {
      svg.text(zero + 4, baseline, shown[i], R"(fill="#777")");
      continue;
    }
    const double x0 = x(std::min(0.0, b.value)), x1 = x(std::max(0.0, b.value));
    svg.rect(x0, y, x1 - x0, thickness, b.highlight ? svg::kWarning : svg::kBar, {},
             fmt::format("{}: {}", b.label, shown[i]));
    svg.text(x1 + 4, baseline, shown[i]);
  }
  svg.line(zero, top - 2, zero, bars_bottom, svg::kAxis);
  if (reference) {
    const double px = x(*chart.reference);
    svg.line(px, top - 4, px, bars_bottom, svg::kMarker, R"(stroke-dasharray="4 3")");
    const std::string label = fmt::format("{} {}", chart.reference_label,
                                          svg::format_value(*chart.reference, chart.value_unit));
    const double half = svg::text_width(label) / 2;
    svg.text(std::clamp(px, half + 4, chart.width - half - 4), top - 8, label,
             R"(text-anchor="middle")");
  }
  svg.text((x.pixel_lo + x.pixel_hi) / 2, bars_bottom + 22, chart.value_title,
           R"(text-anchor="middle")");
  return std::move(svg).finish();
}

std::string heatmap(const Heatmap& chart) {
  const std::size_t rows = std::max(chart.values.size(), chart.row_labels.size());
  std::size_t columns = chart.column_labels.size();
  for (const auto& r : chart.values) columns = std::max(columns, r.size());
  if (rows == 0 || columns == 0)
    return svg::no_data(or_default(chart.title, "heatmap"), chart.width);
  auto value = [&](std::size_t r, std::size_t c) {
    return r < chart.values.size() && c < chart.values[r].size()
               ? chart.values[r][c]
               : std::numeric_limits<double>::quiet_NaN();
  };
  Extent range;
  bool missing = false;
  for (std::size_t r = 0; r < rows; ++r)
    for (std::size_t c = 0; c < columns; ++c) {
      range.add(value(r, c));
      missing = missing || !std::isfinite(value(r, c));
    }
  std::vector<bool> flagged(rows * columns, false);
  std::size_t outliers = 0;
  for (const auto& o : chart.outliers)
    if (o.row < rows && o.column < columns && !flagged[o.row * columns + o.column]) {
      flagged[o.row * columns + o.column] = true;
      ++outliers;
    }

  // Column labels stand at -45 degrees above the grid, so they take 0.71 of their length in
  // height, and the last one as much again right of its column.
  double row_w = 0, column_w = 0;
  for (std::size_t r = 0; r < rows; ++r)
    row_w = std::max(row_w, svg::text_width(label_at(chart.row_labels, r)));
  for (std::size_t c = 0; c < columns; ++c)
    column_w = std::max(column_w, svg::text_width(label_at(chart.column_labels, c)));
  row_w = std::min(row_w, 160.0);
  column_w = std::min(column_w, 160.0);
  const double left = 14 + row_w, top = 38 + column_w * 0.71;
  const double cell = std::clamp(
      (chart.width - left - 8 - column_w * 0.71) / static_cast<double>(columns), 2.0, 48.0);
  const double grid_bottom = top + cell * static_cast<double>(rows);
  const double width = std::max(chart.width, left + cell * static_cast<double>(columns) + 8);

  const std::string title =
      outliers == 0 ? std::string(or_default(chart.title, "heatmap"))
                    : fmt::format("{} ({} outlier{})", or_default(chart.title, "heatmap"), outliers,
                                  outliers == 1 ? "" : "s");
  Svg svg(width, grid_bottom + 40, title);
  const double label_font = std::min(11.0, cell * 0.9);
  const bool print_values = columns <= 16 && cell >= 16;
  const double value_font = std::clamp(cell * 0.3, 7.0, 11.0);
  for (std::size_t r = 0; r < rows; ++r) {
    const double y = top + cell * static_cast<double>(r);
    const std::string row_label = label_at(chart.row_labels, r);
    if (label_font >= 6)
      svg.text(left - 6, y + cell / 2 + label_font * 0.35, svg::fit_text(row_label, row_w),
               fmt::format(R"(text-anchor="end" font-size="{:.0f}")", label_font));
    for (std::size_t c = 0; c < columns; ++c) {
      const double x = left + cell * static_cast<double>(c), v = value(r, c);
      const bool known = std::isfinite(v);
      const std::string tip =
          fmt::format("{} -> {}: {}{}", row_label, label_at(chart.column_labels, c),
                      known ? svg::format_value(v, chart.value_unit) : "no value",
                      flagged[r * columns + c] ? " (outlier)" : "");
      const double t = range.hi > range.lo ? (v - range.lo) / (range.hi - range.lo) : 0.5;
      svg.rect(x, y, cell, cell, known ? svg::sequential_blue(t) : std::string(svg::kMissing),
               R"(stroke="#fff" stroke-width="0.5")", tip);
      // pointer-events: the cell's tooltip still shows when the pointer is on its number.
      if (known && print_values)
        svg.text(x + cell / 2, y + cell / 2 + value_font * 0.35, svg::format_value(v, ""),
                 fmt::format(R"(text-anchor="middle" font-size="{:.0f}" fill="{}" )"
                             R"(pointer-events="none")",
                             value_font, t > 0.5 ? "#fff" : svg::kText));
    }
  }
  for (std::size_t c = 0; c < columns && label_font >= 6; ++c) {
    const double x = left + cell * (static_cast<double>(c) + 0.5), y = top - 6;
    svg.text(x, y, svg::fit_text(label_at(chart.column_labels, c), column_w),
             fmt::format(R"svg(font-size="{:.0f}" transform="rotate(-45 {:.1f} {:.1f})")svg",
                         label_font, x, y));
  }
  // Outlines last, so that no neighbouring cell paints over them.
  for (std::size_t i = 0; i < flagged.size(); ++i)
    if (flagged[i])
      svg.rect(left + cell * static_cast<double>(i % columns) + 1,
               top + cell * static_cast<double>(i / columns) + 1, cell - 2, cell - 2, "none",
               svg::kOutlierOutline);
  svg::heatmap_legend(svg, left, grid_bottom + 14, range, chart.value_unit, missing, outliers > 0);
  return std::move(svg).finish();
}

}  // namespace rocehil::reports
