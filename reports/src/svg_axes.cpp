#include "svg_axes.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <iterator>
#include <utility>

#include "rocehil/common/units.hpp"
#include "rocehil/reports/junit.hpp"

namespace rocehil::reports::svg {

std::string_view series_colour(std::size_t index) {
  // Okabe-Ito without its yellow, which vanishes on white.
  static constexpr std::array<std::string_view, 7> palette = {
      "#0072b2", "#e69f00", "#009e73", "#d55e00", "#cc79a7", "#56b4e9", "#000000"};
  return palette[index % palette.size()];
}

std::string sequential_blue(double t) {
  struct Rgb {
    double r, g, b;
  };
  // ColorBrewer "Blues" ends and middle.
  static constexpr std::array<Rgb, 3> stops = {{{247, 251, 255}, {107, 174, 214}, {8, 48, 107}}};
  t = std::clamp(std::isfinite(t) ? t : 0.0, 0.0, 1.0);
  const std::size_t i = t < 0.5 ? 0 : 1;
  const double f = (t - 0.5 * static_cast<double>(i)) * 2;
  auto mix = [&](double Rgb::*channel) {
    return static_cast<int>(
        std::lround(stops[i].*channel + (stops[i + 1].*channel - stops[i].*channel) * f));
  };
  return fmt::format("#{:02x}{:02x}{:02x}", mix(&Rgb::r), mix(&Rgb::g), mix(&Rgb::b));
}

std::vector<double> nice_ticks(double lo, double hi, int target, bool whole_numbers) {
  if (lo > hi) std::swap(lo, hi);
  if (lo == hi) {
    const double pad = lo == 0 ? 1 : std::fabs(lo) * 0.1;
    if (lo != 0) lo -= pad;
    hi += pad;
  }
  const double raw = (hi - lo) / std::max(target, 1);
  const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  const double r = raw / magnitude;
  double step = (r <= 1 ? 1 : r <= 2 ? 2 : r <= 5 ? 5 : 10) * magnitude;
  if (whole_numbers) step = std::max(step, 1.0);
  // The epsilon keeps 1.0 / 0.2 = 5.000000000000001 from adding a tick past the end.
  const double first = std::floor(lo / step + 1e-9);
  const double last = std::ceil(hi / step - 1e-9);
  std::vector<double> ticks;
  for (double i = first; i <= last; ++i) ticks.push_back(i * step + 0.0);  // + 0.0: no "-0"
  return ticks;
}

std::vector<double> log2_ticks(double lo, double hi, std::size_t max_ticks) {
  const auto e_lo = static_cast<long>(std::lround(std::log2(lo)));
  const auto e_hi = static_cast<long>(std::lround(std::log2(hi)));
  long stride = 1;
  while (static_cast<std::size_t>((e_hi - e_lo) / stride + 1) > std::max<std::size_t>(max_ticks, 1))
    ++stride;
  std::vector<double> ticks;
  for (long e = e_lo; e <= e_hi; ++e)
    if (e % stride == 0) ticks.push_back(std::ldexp(1.0, static_cast<int>(e)));
  return ticks;
}

std::vector<std::string> tick_labels(const std::vector<double>& ticks) {
  double largest = 0;
  for (double t : ticks) largest = std::max(largest, std::fabs(t));
  double divisor = 1;
  std::string_view suffix;
  static constexpr std::array<std::pair<double, std::string_view>, 3> prefixes = {
      {{1e9, "G"}, {1e6, "M"}, {1e3, "k"}}};
  for (auto [scale, prefix] : prefixes) {
    if (largest >= 10 * scale) {  // 5000 stays "5000", 20000 becomes "20k"
      divisor = scale;
      suffix = prefix;
      break;
    }
  }
  const double step = ticks.size() > 1 ? (ticks[1] - ticks[0]) / divisor : 1;
  const int decimals = std::clamp(static_cast<int>(std::ceil(-std::log10(step) - 1e-9)), 0, 9);
  std::vector<std::string> labels;
  labels.reserve(ticks.size());
  for (double t : ticks)
    labels.push_back(fmt::format("{:.{}f}{}", t / divisor + 0.0, decimals, suffix));
  return labels;
}

std::string format_binary(double value) {
  static constexpr std::array<std::string_view, 6> units = {"", "K", "M", "G", "T", "P"};
  std::size_t i = 0;
  for (; std::fabs(value) >= 1024 && i + 1 < units.size(); ++i) value /= 1024;
  if (value == std::floor(value)) return fmt::format("{:.0f}{}", value, units[i]);
  return fmt::format("{:.1f}{}", value, units[i]);
}

std::string format_value(double value, std::string_view unit) {
  if (!unit.empty()) return format_si(value, std::string(unit).c_str());
  if (std::fabs(value) < 1e4) return fmt::format("{:.4g}", value);
  static constexpr std::array<std::string_view, 5> prefixes = {"", "k", "M", "G", "T"};
  std::size_t i = 0;
  for (; std::fabs(value) >= 1000 && i + 1 < prefixes.size(); ++i) value /= 1000;
  return fmt::format("{:.3g}{}", value, prefixes[i]);
}

double nearest_rank(std::span<const double> sorted, double percent) {
  const double n = static_cast<double>(sorted.size());
  const double rank = std::clamp(std::ceil(percent / 100 * n - 1e-9), 1.0, n);
  return sorted[static_cast<std::size_t>(rank) - 1];
}

Histogram histogram(std::span<const double> sorted, std::size_t max_bins) {
  const double n = static_cast<double>(sorted.size());
  const double lo = sorted.front(), hi = sorted.back();
  Histogram h;
  if (lo == hi) {
    h.width = lo == 0 ? 1 : std::fabs(lo) * 0.1;
    h.lo = lo - h.width / 2;
    h.counts.assign(1, sorted.size());
    return h;
  }
  const double fd = 2 * (nearest_rank(sorted, 75) - nearest_rank(sorted, 25)) / std::cbrt(n);
  const double wanted = fd > 0 ? std::ceil((hi - lo) / fd) : std::ceil(std::sqrt(n));
  const auto bins = static_cast<std::size_t>(
      std::clamp(wanted, 1.0, static_cast<double>(std::max<std::size_t>(max_bins, 1))));
  h.lo = lo;
  h.width = (hi - lo) / static_cast<double>(bins);
  h.counts.assign(bins, 0);
  for (double v : sorted)
    ++h.counts[std::min(bins - 1, static_cast<std::size_t>((v - lo) / h.width))];
  return h;
}

double Scale::operator()(double value) const {
  auto f = [this](double v) { return log2 ? std::log2(v) : v; };
  const double span = f(hi) - f(lo);
  const double t = span == 0 ? 0.5 : (f(value) - f(lo)) / span;
  return pixel_lo + t * (pixel_hi - pixel_lo);
}

namespace {
// Code points, not bytes: a multi-byte UTF-8 character is one glyph.
std::size_t glyphs(std::string_view text) {
  return static_cast<std::size_t>(
      std::count_if(text.begin(), text.end(), [](char c) { return (c & 0xC0) != 0x80; }));
}
}  // namespace

double text_width(std::string_view text, double font_size) {
  return static_cast<double>(glyphs(text)) * font_size * 0.6;
}

std::string fit_text(std::string_view text, double max_width, double font_size) {
  if (text_width(text, font_size) <= max_width) return std::string(text);
  const auto keep = static_cast<std::size_t>(std::max(max_width / (font_size * 0.6) - 1, 1.0));
  std::size_t seen = 0, cut = 0;
  for (; cut < text.size(); ++cut)
    if ((text[cut] & 0xC0) != 0x80 && seen++ == keep) break;
  return std::string(text.substr(0, cut)) + "\u2026";
}

Svg::Svg(double width, double height, std::string_view title) {
  out_.reserve(4096);
  const double w = std::ceil(width), h = std::ceil(height);
  fmt::format_to(std::back_inserter(out_),
                 R"(<svg xmlns="http://www.w3.org/2000/svg" width="{0:.0f}" height="{1:.0f}" )"
                 R"(viewBox="0 0 {0:.0f} {1:.0f}" role="img" font-family="sans-serif" )"
                 R"(font-size="11" fill="{2}"><title>{3}</title>)"
                 R"(<rect width="100%" height="100%" fill="#fff"/>)",
                 w, h, kText, xml_escape(title));
  text(8, 18, title, R"(font-size="13" font-weight="bold")");
}

void Svg::line(double x1, double y1, double x2, double y2, std::string_view stroke,
               std::string_view attrs) {
  fmt::format_to(std::back_inserter(out_),
                 R"(<line x1="{:.1f}" y1="{:.1f}" x2="{:.1f}" y2="{:.1f}" stroke="{}" {}/>)", x1,
                 y1, x2, y2, stroke, attrs);
}

void Svg::rect(double x, double y, double w, double h, std::string_view fill,
               std::string_view attrs, std::string_view tooltip) {
  fmt::format_to(std::back_inserter(out_),
                 R"(<rect x="{:.1f}" y="{:.1f}" width="{:.1f}" height="{:.1f}" fill="{}" {})", x, y,
                 std::max(w, 0.0), std::max(h, 0.0), fill, attrs);
  end("rect", tooltip);
}

void Svg::circle(double cx, double cy, double r, std::string_view fill, std::string_view tooltip) {
  fmt::format_to(std::back_inserter(out_),
                 R"(<circle cx="{:.1f}" cy="{:.1f}" r="{:.1f}" fill="{}")", cx, cy, r, fill);
  end("circle", tooltip);
}

void Svg::path(std::string_view d, std::string_view stroke, std::string_view attrs) {
  fmt::format_to(std::back_inserter(out_),
                 R"(<path d="{}" fill="none" stroke="{}" stroke-width="1.5" {}/>)", d, stroke,
                 attrs);
}

void Svg::open_link(std::string_view href) {
  fmt::format_to(std::back_inserter(out_), R"(<a href="{}">)", xml_escape(href));
}

void Svg::close_link() {
  out_ += "</a>";
}

void Svg::text(double x, double y, std::string_view content, std::string_view attrs) {
  if (content.empty()) return;
  fmt::format_to(std::back_inserter(out_), R"(<text x="{:.1f}" y="{:.1f}" {}>{}</text>)", x, y,
                 attrs, xml_escape(content));
}

// A tooltip is a <title> child, so the element needs a closing tag only when it has one.
void Svg::end(std::string_view element, std::string_view tooltip) {
  if (tooltip.empty()) {
    out_ += "/>";
    return;
  }
  fmt::format_to(std::back_inserter(out_), "><title>{}</title></{}>", xml_escape(tooltip), element);
}

std::string Svg::finish() && {
  out_ += "</svg>";
  return std::move(out_);
}

Axis linear_axis(double lo, double hi, std::string_view title, bool whole_numbers) {
  Axis a;
  a.ticks = nice_ticks(lo, hi, 5, whole_numbers);
  a.labels = tick_labels(a.ticks);
  a.scale.lo = a.ticks.front();
  a.scale.hi = a.ticks.back();
  a.title = title;
  return a;
}

Axis log2_axis(double lo, double hi, std::string_view title) {
  Axis a;
  a.scale.log2 = true;
  a.scale.lo = std::exp2(std::floor(std::log2(lo)));
  a.scale.hi = std::exp2(std::ceil(std::log2(hi)));
  if (a.scale.lo == a.scale.hi) {  // one size: room either side of it
    a.scale.lo /= 2;
    a.scale.hi *= 2;
  }
  a.ticks = log2_ticks(a.scale.lo, a.scale.hi);
  for (double t : a.ticks) a.labels.push_back(format_binary(t));
  a.title = title;
  return a;
}

Frame plot_frame(double width, double height, double legend, Axis& x, Axis& y) {
  const Frame f{.left = left_margin(y.labels),
                .top = 32,
                .right = width - 16 - legend,
                .bottom = height - 44};
  x.scale.pixel_lo = f.left;
  x.scale.pixel_hi = f.right;
  y.scale.pixel_lo = f.bottom;
  y.scale.pixel_hi = f.top;
  return f;
}

void draw_axes(Svg& svg, const Frame& frame, const Axis& x, const Axis& y) {
  svg.rect(frame.left, frame.top, frame.width(), frame.height(), kPlotBackground);
  for (std::size_t i = 0; i < y.ticks.size(); ++i) {
    const double py = y.scale(y.ticks[i]);
    svg.line(frame.left, py, frame.right, py, kGrid);
    svg.text(frame.left - 6, py + 4, y.labels[i], R"(text-anchor="end")");
  }
  for (std::size_t i = 0; i < x.ticks.size(); ++i) {
    const double px = x.scale(x.ticks[i]);
    svg.line(px, frame.top, px, frame.bottom, kGrid);
    svg.line(px, frame.bottom, px, frame.bottom + 4, kAxis);
    svg.text(px, frame.bottom + 16, x.labels[i], R"(text-anchor="middle")");
  }
  svg.line(frame.left, frame.top, frame.left, frame.bottom, kAxis);
  svg.line(frame.left, frame.bottom, frame.right, frame.bottom, kAxis);
  svg.text((frame.left + frame.right) / 2, frame.bottom + 34, x.title, R"(text-anchor="middle")");
  const double ty = (frame.top + frame.bottom) / 2;
  svg.text(14, ty, y.title,
           fmt::format(R"svg(text-anchor="middle" transform="rotate(-90 14 {:.1f})")svg", ty));
}

double legend_width(const std::vector<std::string_view>& names) {
  double widest = 0;
  for (auto n : names) widest = std::max(widest, text_width(n));
  return names.empty() ? 0 : widest + 30;
}

void draw_legend(Svg& svg, double x, double y, const std::vector<std::string_view>& names) {
  for (std::size_t i = 0; i < names.size(); ++i) {
    const double row = y + 8 + 16 * static_cast<double>(i);
    svg.line(x, row, x + 16, row, series_colour(i), R"(stroke-width="3")");
    svg.text(x + 22, row + 4, names[i]);
  }
}

double left_margin(const std::vector<std::string>& y_labels) {
  double widest = 0;
  for (const auto& l : y_labels) widest = std::max(widest, text_width(l));
  return 24 + widest + 8;  // rotated title, labels, gap before the axis
}

void heatmap_legend(Svg& svg, double x, double y, const Extent& range, std::string_view unit,
                    bool missing, bool outliers) {
  if (!range.empty()) {
    const std::string lo = format_value(range.lo, unit), hi = format_value(range.hi, unit);
    svg.text(x, y + 9, lo);
    x += text_width(lo) + 4;
    for (int k = 0; k <= 5; ++k, x += 14) svg.rect(x, y, 14, 10, sequential_blue(k / 5.0));
    svg.text(x + 4, y + 9, hi);
    x += text_width(hi) + 20;
  }
  if (missing) {
    svg.rect(x, y, 14, 10, kMissing);
    svg.text(x + 18, y + 9, "no value");
    x += 80;
  }
  if (outliers) {
    svg.rect(x + 1, y + 1, 12, 8, "none", kOutlierOutline);
    svg.text(x + 18, y + 9, "outlier");
  }
}

std::string no_data(std::string_view title, double width) {
  Svg svg(width, 60, title);
  svg.text(width / 2, 42, "no data", R"(text-anchor="middle" fill="#777")");
  return std::move(svg).finish();
}

}  // namespace rocehil::reports::svg
