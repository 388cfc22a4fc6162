#include "rocehil/reports/svg_chart.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <map>
#include <regex>
#include <string>
#include <vector>

// The shared helpers are private to the library, and reports_tests has no src/ include path.
#include "svg_axes.hpp"

namespace rocehil::reports {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

std::string unescape(std::string s) {
  for (auto [from, to] :
       {std::pair{"&lt;", "<"}, {"&gt;", ">"}, {"&quot;", "\""}, {"&apos;", "'"}, {"&amp;", "&"}}) {
    for (std::size_t at = 0; (at = s.find(from, at)) != std::string::npos; at += 1)
      s.replace(at, std::string(from).size(), to);
  }
  return s;
}

// One element as the charts write it: attributes, and the text of its <title> child if any.
struct Element {
  std::map<std::string, std::string> attrs;
  std::string title;
  double num(const std::string& name) const { return std::stod(attrs.at(name)); }
  std::string at(const std::string& name) const {
    auto it = attrs.find(name);
    return it == attrs.end() ? "" : it->second;
  }
};

std::vector<Element> elements(const std::string& svg, const std::string& name) {
  const std::regex tag("<" + name + R"(((?:\s+[\w:-]+="[^"]*")*)\s*(/?)>)");
  const std::regex attr(R"re(([\w:-]+)="([^"]*)")re");
  std::vector<Element> out;
  for (std::sregex_iterator it(svg.begin(), svg.end(), tag), end; it != end; ++it) {
    Element e;
    const std::string attrs = (*it)[1];
    for (std::sregex_iterator a(attrs.begin(), attrs.end(), attr); a != end; ++a)
      e.attrs[(*a)[1]] = unescape((*a)[2]);
    const auto after = static_cast<std::size_t>(it->position() + it->length());
    if ((*it)[2] != "/" && svg.compare(after, 7, "<title>") == 0)
      e.title = unescape(svg.substr(after + 7, svg.find("</title>", after) - after - 7));
    out.push_back(std::move(e));
  }
  return out;
}

std::vector<std::string> texts(const std::string& svg) {
  const std::regex text(R"(<text[^>]*>([^<]*)</text>)");
  std::vector<std::string> out;
  for (std::sregex_iterator it(svg.begin(), svg.end(), text), end; it != end; ++it)
    out.push_back(unescape((*it)[1]));
  return out;
}

bool has_text(const std::string& svg, const std::string& content) {
  for (const auto& t : texts(svg))
    if (t == content) return true;
  return false;
}

std::vector<Element> with(const std::vector<Element>& all, const std::string& attr,
                          std::string_view value) {
  std::vector<Element> out;
  for (const auto& e : all)
    if (e.at(attr) == value) out.push_back(e);
  return out;
}

// The plot area every x/y chart paints first.
Element plot_area(const std::string& svg) {
  const auto areas = with(elements(svg, "rect"), "fill", svg::kPlotBackground);
  EXPECT_EQ(areas.size(), 1u);
  return areas.empty() ? Element{} : areas.front();
}

// Well-formed enough for a browser: starts with <svg, ends with </svg>, every '<' opens a tag,
// every element name has as many closing tags as opening ones (self-closing ones aside), never
// closing one before it opened, and every '&' starts an entity.
void expect_well_formed(const std::string& svg) {
  EXPECT_TRUE(svg.starts_with("<svg ")) << svg.substr(0, 40);
  EXPECT_TRUE(svg.ends_with("</svg>"));
  EXPECT_NE(svg.find(R"(xmlns="http://www.w3.org/2000/svg")"), std::string::npos);
  EXPECT_NE(svg.find(R"(role="img")"), std::string::npos);
  EXPECT_NE(svg.find("viewBox=\"0 0 "), std::string::npos);
  std::map<std::string, int> depth;
  for (std::size_t at = 0; (at = svg.find('<', at)) != std::string::npos;) {
    const std::size_t close = svg.find('>', at);
    ASSERT_NE(close, std::string::npos) << "unterminated tag at " << at;
    const std::string tag = svg.substr(at + 1, close - at - 1);
    ASSERT_EQ(tag.find('<'), std::string::npos) << "a raw '<' in: " << tag;
    const bool closing = tag.starts_with('/');
    const std::string name =
        tag.substr(closing ? 1 : 0, tag.find_first_of(" /", 1) - (closing ? 1 : 0));
    ASSERT_TRUE(!name.empty() && std::isalpha(static_cast<unsigned char>(name[0])))
        << "a raw '<' before: " << svg.substr(at, 30);
    if (closing) {
      ASSERT_GE(--depth[name], 0) << "</" << name << "> before its <" << name << ">";
    } else if (!tag.ends_with('/')) {
      ++depth[name];
    }
    at = close + 1;
  }
  for (const auto& [name, open] : depth) EXPECT_EQ(open, 0) << "unbalanced <" << name << ">";
  EXPECT_EQ(depth["svg"], 0);
  const std::regex bare_amp(R"(&(?!(amp|lt|gt|quot|apos|#[0-9]+);))");
  EXPECT_FALSE(std::regex_search(svg, bare_amp));
  const std::regex non_finite(R"((^|[^a-z])-?(nan|inf)([^a-z]|$))", std::regex::icase);
  EXPECT_FALSE(std::regex_search(svg, non_finite)) << "a NaN or infinity was printed";
}

double luminance(const std::string& hex) {
  const long rgb = std::strtol(hex.c_str() + 1, nullptr, 16);
  return 0.2126 * static_cast<double>((rgb >> 16) & 0xff) +
         0.7152 * static_cast<double>((rgb >> 8) & 0xff) + 0.0722 * static_cast<double>(rgb & 0xff);
}

TEST(SvgTicks, StepsOfOneTwoOrFiveCoverTheRange) {
  for (double hi : {0.93, 17.0, 1234.0, 7.5e6, 3.0}) {
    const auto ticks = svg::nice_ticks(0, hi);
    ASSERT_GE(ticks.size(), 3u) << hi;
    EXPECT_LE(ticks.size(), 11u) << hi;
    const double step = ticks[1] - ticks[0];
    const double mantissa = step / std::pow(10.0, std::floor(std::log10(step)));
    EXPECT_TRUE(std::fabs(mantissa - 1) < 1e-9 || std::fabs(mantissa - 2) < 1e-9 ||
                std::fabs(mantissa - 5) < 1e-9)
        << hi << ": step " << step;
    for (std::size_t i = 1; i < ticks.size(); ++i)
      EXPECT_NEAR(ticks[i] - ticks[i - 1], step, step * 1e-9) << hi;
    EXPECT_EQ(ticks.front(), 0) << hi;
    EXPECT_GE(ticks.back(), hi) << hi;
    EXPECT_LT(ticks.back() - step, hi) << hi << ": a whole step past the maximum";
  }
  EXPECT_EQ(svg::nice_ticks(0, 0.93).back(), 1.0);
  EXPECT_EQ(svg::nice_ticks(0, 0.93).size(), 6u);  // 0, 0.2 ... 1.0
  EXPECT_EQ(svg::nice_ticks(0, 17), (std::vector<double>{0, 5, 10, 15, 20}));
  EXPECT_EQ(svg::nice_ticks(0, 1234), (std::vector<double>{0, 500, 1000, 1500}));
  EXPECT_EQ(svg::nice_ticks(0, 0).front(), 0);  // all zero: the axis still has a length
  EXPECT_EQ(svg::nice_ticks(0, 0).back(), 1);
  EXPECT_EQ(svg::nice_ticks(0, 3, 5, true), (std::vector<double>{0, 1, 2, 3}));
}

TEST(SvgTicks, LabelsAndBinaryUnits) {
  EXPECT_EQ(svg::tick_labels(svg::nice_ticks(0, 0.93)),
            (std::vector<std::string>{"0.0", "0.2", "0.4", "0.6", "0.8", "1.0"}));
  EXPECT_EQ(svg::tick_labels({0, 500, 1000}), (std::vector<std::string>{"0", "500", "1000"}));
  EXPECT_EQ(svg::tick_labels({0, 20000, 40000}), (std::vector<std::string>{"0k", "20k", "40k"}));
  EXPECT_EQ(svg::format_binary(4096), "4K");
  EXPECT_EQ(svg::format_binary(65536), "64K");
  EXPECT_EQ(svg::format_binary(1 << 20), "1M");
  EXPECT_EQ(svg::format_binary(16 << 20), "16M");
  EXPECT_EQ(svg::format_binary(1536), "1.5K");
  EXPECT_EQ(svg::format_binary(512), "512");
  const auto ticks = svg::log2_ticks(4096, 16 << 20);
  EXPECT_LE(ticks.size(), 8u);
  EXPECT_EQ(ticks.front(), 4096);
  EXPECT_EQ(ticks.back(), 16 << 20);
  for (double t : ticks) EXPECT_EQ(std::exp2(std::round(std::log2(t))), t);
}

TEST(SvgScale, MaxAtTopZeroAtBottomAndLog2Halfway) {
  const svg::Scale y{.lo = 0, .hi = 100, .pixel_lo = 300, .pixel_hi = 32};
  EXPECT_DOUBLE_EQ(y(100), 32);
  EXPECT_DOUBLE_EQ(y(0), 300);
  EXPECT_DOUBLE_EQ(y(50), 166);
  const svg::Scale x{.lo = 4096, .hi = 1 << 20, .pixel_lo = 50, .pixel_hi = 550, .log2 = true};
  EXPECT_DOUBLE_EQ(x(4096), 50);
  EXPECT_DOUBLE_EQ(x(1 << 20), 550);
  EXPECT_DOUBLE_EQ(x(65536), 300);  // 2^16 is halfway between 2^12 and 2^20
}

TEST(SvgLineChart, PointsLandWhereTheAxesSay) {
  const std::string out = line_chart(
      {.title = "busbw",
       .x_title = "message size",
       .y_title = "busbw (GB/s)",
       .x_axis = XAxis::log2_bytes,
       .series = {{"qps=1", {{4096, 0}, {65536, 50}, {1 << 20, 100}}}, {"qps=8", {{65536, 60}}}}});
  expect_well_formed(out);
  const Element area = plot_area(out);
  const double top = area.num("y"), bottom = top + area.num("height");
  const auto dots = with(elements(out, "circle"), "fill", svg::series_colour(0));
  ASSERT_EQ(dots.size(), 3u);
  EXPECT_NEAR(dots[0].num("cy"), bottom, 0.11);  // y = 0
  EXPECT_NEAR(dots[2].num("cy"), top, 0.051);    // y = 100, the top tick
  EXPECT_NEAR(dots[1].num("cx"), (dots[0].num("cx") + dots[2].num("cx")) / 2, 0.1);
  EXPECT_NEAR(dots[0].num("cx"), area.num("x"), 0.051);  // 4K starts the axis
  EXPECT_EQ(dots[1].title, "qps=1: 64K, 50");
  for (const char* label : {"4K", "64K", "1M", "qps=1", "qps=8", "busbw (GB/s)", "100"})
    EXPECT_TRUE(has_text(out, label)) << label;
  EXPECT_EQ(elements(out, "circle").size(), 4u);
}

TEST(SvgLineChart, NonFinitePointsAreNotDrawn) {
  const std::string out =
      line_chart({.series = {{"s", {{1, 1}, {2, kNaN}, {3, 3}, {kInf, 4}, {4, 4}, {5, kInf}}}}});
  expect_well_formed(out);
  EXPECT_EQ(elements(out, "circle").size(), 3u);
  const auto paths = elements(out, "path");
  ASSERT_EQ(paths.size(), 1u);
  const std::string d = paths[0].at("d");
  EXPECT_EQ(std::count(d.begin(), d.end(), 'M'), 2) << d;  // broken at x = 2
  EXPECT_EQ(std::count(d.begin(), d.end(), 'L'), 1) << d;  // 3 -> 4

  // A log2 axis cannot place x <= 0.
  const std::string log =
      line_chart({.x_axis = XAxis::log2_bytes, .series = {{"s", {{0, 1}, {-4, 2}, {1024, 3}}}}});
  EXPECT_EQ(elements(log, "circle").size(), 1u);
}

TEST(SvgCharts, NothingToDrawSaysNoData) {
  const std::vector<std::string> empties = {
      line_chart({.title = "t"}),
      line_chart({.series = {{"s", {{1, kNaN}, {kNaN, 2}}}}}),
      bar_chart({}),
      bar_chart({.bars = {{"a", kNaN}}}),
      timeline_chart({.series = {{"cnp", {}}}}),
      timeline_chart({.series = {{"cnp", {kNaN, kInf}}}}),
      distribution_chart({.samples = {kNaN}}),
      heatmap({}),
  };
  for (const auto& out : empties) {
    expect_well_formed(out);
    EXPECT_TRUE(has_text(out, "no data")) << out;
    EXPECT_TRUE(elements(out, "circle").empty());
    EXPECT_TRUE(elements(out, "path").empty());
  }
  EXPECT_FALSE(has_text(line_chart({.series = {{"s", {{1, 1}}}}}), "no data"));
}

TEST(SvgCharts, TextIsEscaped) {
  const std::string nasty = "a<b & \"c\"";
  const std::string escaped = "a&lt;b &amp; &quot;c&quot;";
  const std::vector<std::string> outs = {
      line_chart({.title = nasty,
                  .x_title = nasty,
                  .y_title = nasty,
                  .series = {{nasty, {{1, 1}, {2, 2}}}}}),
      bar_chart({.title = nasty,
                 .value_title = nasty,
                 .bars = {{nasty, 1}},
                 .reference = 1,
                 .reference_label = nasty}),
      timeline_chart({.title = nasty, .y_title = nasty, .series = {{nasty, {1, 2}}}}),
      distribution_chart({.title = nasty, .x_title = nasty, .samples = {1, 2, 3}}),
      heatmap({.title = nasty, .row_labels = {nasty}, .column_labels = {nasty}, .values = {{1}}}),
      line_chart({.title = nasty}),
  };
  for (const auto& out : outs) {
    expect_well_formed(out);
    EXPECT_NE(out.find("<title>" + escaped), std::string::npos);
    EXPECT_EQ(out.find(nasty), std::string::npos);
    EXPECT_EQ(out.find("a<b"), std::string::npos);
  }
  EXPECT_TRUE(has_text(outs[0], nasty));  // the legend entry, read back
}

TEST(SvgBarChart, LengthsAreProportionalToValues) {
  const std::string out =
      bar_chart({.title = "bytes per spine",
                 .value_unit = "B",
                 .bars = {{"spine1", 1e9}, {"spine2", 2e9}, {"spine3", 4e9, true}},
                 .reference = 2e9});
  expect_well_formed(out);
  const auto rects = elements(out, "rect");
  const auto plain = with(rects, "fill", svg::kBar), warned = with(rects, "fill", svg::kWarning);
  ASSERT_EQ(plain.size(), 2u);
  ASSERT_EQ(warned.size(), 1u);
  const double w1 = plain[0].num("width"), w2 = plain[1].num("width"), w4 = warned[0].num("width");
  EXPECT_GT(w1, 10);
  EXPECT_NEAR(w2 / w1, 2, 0.01);
  EXPECT_NEAR(w4 / w1, 4, 0.01);
  EXPECT_EQ(plain[0].num("x"), warned[0].num("x"));  // all from the same zero
  EXPECT_EQ(warned[0].title, "spine3: 4 GB");
  EXPECT_TRUE(has_text(out, "1 GB"));
  EXPECT_TRUE(has_text(out, "mean 2 GB"));

  // The reference line sits where a bar of its value ends.
  const auto dashed = with(elements(out, "line"), "stroke-dasharray", "4 3");
  ASSERT_EQ(dashed.size(), 1u);
  EXPECT_NEAR(dashed[0].num("x1"), plain[1].num("x") + w2, 0.16);

  const std::string gap = bar_chart({.bars = {{"a", 1}, {"b", kNaN}, {"c", 2}}});
  expect_well_formed(gap);
  EXPECT_EQ(with(elements(gap, "rect"), "fill", svg::kBar).size(), 2u);
  EXPECT_TRUE(has_text(gap, "no value"));
}

TEST(SvgTimeline, StepsPerBinWithGaps) {
  const std::string out =
      timeline_chart({.title = "CNP per bin",
                      .y_title = "CNPs",
                      .bin_ms = 500,
                      .series = {{"spine1", {1, 2, kNaN, 4}}, {"spine2", {0, 0, 0, 0}}}});
  expect_well_formed(out);
  EXPECT_TRUE(has_text(out, "time (s)"));  // 2 s of bins
  const Element area = plot_area(out);
  const auto paths = elements(out, "path");
  ASSERT_EQ(paths.size(), 2u);
  const std::string d = paths[0].at("d");
  EXPECT_EQ(std::count(d.begin(), d.end(), 'M'), 2) << d;
  EXPECT_EQ(std::count(d.begin(), d.end(), 'H'), 3) << d;  // one flat segment per finite bin
  // The last bin ends at 2 s, the last tick, the right edge of the plot.
  const double last_h = std::stod(d.substr(d.rfind('H') + 1));
  EXPECT_NEAR(last_h, area.num("x") + area.num("width"), 0.11);
  EXPECT_EQ(paths[1].at("stroke"), svg::series_colour(1));

  const std::string ms = timeline_chart(
      {.bin_ms = 10, .series = {{"pfc", {1, kNaN, 3}}}, .style = TimelineStyle::lines});
  expect_well_formed(ms);
  EXPECT_TRUE(has_text(ms, "time (ms)"));
  EXPECT_EQ(elements(ms, "circle").size(), 2u);  // lone points get a dot
}

// On another chart's clock: bin 0 starts 1 s before the traffic, and a marker at 2 s (the
// link's event) is drawn where the axis reads 2; one before the bins is not.
TEST(SvgTimeline, BinsOnACasesClockWithItsEvents) {
  const std::string out =
      timeline_chart({.bin_ms = 500,
                      .series = {{"cnp", {1, 2, 3, 4, 5, 6, 7, 8}}},
                      .start_ms = -1000,
                      .x_title = "time (s) from the traffic's start",
                      .markers = {{2000, "link_down l1-s1"}, {-2000, "before it all"}}});
  expect_well_formed(out);
  EXPECT_TRUE(has_text(out, "time (s) from the traffic's start"));
  EXPECT_TRUE(has_text(out, "link_down l1-s1"));
  EXPECT_FALSE(has_text(out, "before it all"));
  const Element area = plot_area(out);
  // The axis runs -1 .. 3 s: 2 s is three quarters across.
  const auto dashed = elements(out, "line");
  const auto marker = std::find_if(dashed.begin(), dashed.end(), [](const Element& e) {
    return !e.at("stroke-dasharray").empty();
  });
  ASSERT_NE(marker, dashed.end());
  EXPECT_NEAR(marker->num("x1"), area.num("x") + area.num("width") * 3 / 4, 0.11);
}

TEST(SvgDistribution, PercentileMarkersAtNearestRank) {
  std::vector<double> samples;
  for (int i = 100; i >= 1; --i) samples.push_back(i);
  samples.push_back(kNaN);
  const std::string out =
      distribution_chart({.title = "allreduce", .x_title = "time (us)", .samples = samples});
  expect_well_formed(out);
  EXPECT_NE(out.find("<title>allreduce (n=100, p50 50, p99 99)</title>"), std::string::npos);
  EXPECT_TRUE(has_text(out, "p50 50"));
  EXPECT_TRUE(has_text(out, "p99 99"));
  const Element area = plot_area(out);  // the axis runs 0..100
  const auto markers = with(elements(out, "line"), "stroke-dasharray", "4 3");
  ASSERT_EQ(markers.size(), 2u);
  EXPECT_NEAR(markers[0].num("x1"), area.num("x") + 0.50 * area.num("width"), 0.11);
  EXPECT_NEAR(markers[1].num("x1"), area.num("x") + 0.99 * area.num("width"), 0.11);
  double counted = 0;
  for (const auto& bar : with(elements(out, "rect"), "fill", svg::kBar)) {
    const std::string& t = bar.title;
    counted += std::stod(t.substr(t.rfind(' ') + 1));
  }
  EXPECT_EQ(counted, 100);

  const std::vector<double> sorted = {1, 2, 3, 4};
  EXPECT_EQ(svg::nearest_rank(sorted, 50), 2);
  EXPECT_EQ(svg::nearest_rank(sorted, 51), 3);
  EXPECT_EQ(svg::nearest_rank(sorted, 0), 1);
  EXPECT_EQ(svg::nearest_rank(sorted, 100), 4);
  EXPECT_LE(svg::histogram(sorted, 40).counts.size(), 40u);
}

TEST(SvgHeatmap, OutliersMissingCellsAndTooltips) {
  const std::string out = heatmap({.title = "rank busbw",
                                   .row_labels = {"r0", "r1"},
                                   .column_labels = {"r0", "r1", "r2"},
                                   .values = {{1, 2, 3}, {4, kNaN}},  // r1 -> r2 missing
                                   .outliers = {{0, 2}, {0, 2}, {9, 9}},
                                   .value_unit = "Gbps"});
  expect_well_formed(out);
  std::map<std::string, Element> cells;
  for (const auto& r : elements(out, "rect"))
    if (!r.title.empty()) cells[r.title] = r;
  ASSERT_EQ(cells.size(), 6u);
  const Element& outlier = cells.at("r0 -> r2: 3 Gbps (outlier)");
  EXPECT_EQ(cells.at("r1 -> r1: no value").at("fill"), svg::kMissing);
  EXPECT_EQ(cells.at("r1 -> r2: no value").at("fill"), svg::kMissing);
  EXPECT_NE(cells.at("r0 -> r0: 1 Gbps").at("fill"), svg::kMissing);
  EXPECT_TRUE(has_text(out, "3"));
  EXPECT_TRUE(has_text(out, "no value"));  // the legend
  EXPECT_NE(out.find("<title>rank busbw (1 outlier)</title>"), std::string::npos);

  // One red outline on the grid, on the outlier's cell (the other is the legend's swatch).
  int on_grid = 0;
  for (const auto& r : with(elements(out, "rect"), "stroke", svg::kWarning)) {
    EXPECT_EQ(r.at("fill"), "none");
    if (r.num("width") == 12) continue;  // legend
    ++on_grid;
    EXPECT_NEAR(r.num("x"), outlier.num("x") + 1, 0.051);
    EXPECT_NEAR(r.num("y"), outlier.num("y") + 1, 0.051);
  }
  EXPECT_EQ(on_grid, 1);
  EXPECT_EQ(with(elements(heatmap({.values = {{1, 2}}}), "rect"), "stroke", svg::kWarning).size(),
            0u);
}

TEST(SvgHeatmap, LargerValuesAreDarker) {
  const std::string out = heatmap({.values = {{5, 1, 3, 2, 6, 4}}});
  expect_well_formed(out);
  std::map<double, double> light_by_value;
  for (const auto& r : elements(out, "rect"))
    if (!r.title.empty())
      light_by_value[std::stod(r.title.substr(r.title.rfind(' ') + 1))] = luminance(r.at("fill"));
  ASSERT_EQ(light_by_value.size(), 6u);
  double previous = 256;
  for (const auto& [value, light] : light_by_value) {
    EXPECT_LT(light, previous) << value;
    previous = light;
  }
  EXPECT_EQ(svg::sequential_blue(0), "#f7fbff");
  EXPECT_EQ(svg::sequential_blue(1), "#08306b");
}

TEST(SvgCharts, ReportShapedChartsAreWellFormed) {
  LineChart busbw{.title = "allreduce busbw",
                  .x_title = "size",
                  .y_title = "GB/s",
                  .x_axis = XAxis::log2_bytes};
  for (int qps : {1, 2, 4, 8, 16, 32, 64, 128}) {
    LineSeries s{"qps=" + std::to_string(qps), {}};
    for (int e = 12; e <= 30; ++e) s.points.push_back({std::exp2(e), 0.1 * e * qps});
    busbw.series.push_back(std::move(s));
  }
  std::vector<std::vector<double>> matrix(24, std::vector<double>(24, 0));
  for (std::size_t r = 0; r < 24; ++r)
    for (std::size_t c = 0; c < 24; ++c) matrix[r][c] = r == c ? kNaN : static_cast<double>(r * c);
  std::vector<double> waves;
  for (int i = 0; i < 5000; ++i) waves.push_back(std::sin(i * 0.01) * 40 + 50);
  for (const std::string& out : {line_chart(busbw), bar_chart({.bars = {{"qp 0", 0}, {"qp 1", 0}}}),
                                 timeline_chart({.bin_ms = 1, .series = {{"xoff", waves}}}),
                                 distribution_chart({.samples = {7, 7, 7}}),
                                 distribution_chart({.samples = waves, .max_bins = 40}),
                                 heatmap({.values = matrix, .outliers = {{3, 4}}})}) {
    expect_well_formed(out);
    EXPECT_LT(out.size(), 400'000u);
  }
  // Past 16 columns no cell prints its value: the heading, 2 x 24 labels, the legend's min, max
  // and "no value" are all the text there is.
  EXPECT_EQ(texts(heatmap({.values = matrix})).size(), 1 + 24u * 2 + 3);
}

}  // namespace
}  // namespace rocehil::reports
