#include "html_charts.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <optional>
#include <set>

#include "json_view.hpp"
#include "rocehil/common/units.hpp"
#include "rocehil/reports/junit.hpp"
#include "rocehil/reports/repeats.hpp"
#include "rocehil/reports/run_json.hpp"
#include "rocehil/reports/svg_chart.hpp"

namespace rocehil::reports {

namespace {

// Past this many QPs the rate chart keeps the slowest: those are what a reader looks for.
constexpr std::size_t max_qp_bars = 48;

std::string figure(const std::string& svg, const std::string& caption) {
  return fmt::format("<figure>{}<figcaption>{}</figcaption></figure>\n", svg, xml_escape(caption));
}

std::string charts_div(const std::string& figures) {
  return figures.empty() ? "" : "<div class=\"charts\">\n" + figures + "</div>\n";
}

// The final attempt of each repeat that measured something: the case's samples, as
// final_attempts (repeats.hpp) tells them; case_record reads one attempt per entry, so its
// indices are run.json's.
std::vector<const nlohmann::json*> measured_repeats(const nlohmann::json& c) {
  const nlohmann::json& attempts = list(c, "attempts");
  const CaseRecord record = case_record(c);
  std::vector<const nlohmann::json*> out;
  for (const Attempt* a : final_attempts(record))
    if (!a->error) out.push_back(&attempts[static_cast<std::size_t>(a - record.attempts.data())]);
  return out;
}

std::optional<double> median_metric(const nlohmann::json& c, std::string_view metric) {
  std::vector<double> values;
  for (const nlohmann::json* a : measured_repeats(c))
    if (const auto v = number(member(*a, "metrics"), metric)) values.push_back(*v);
  const auto s = spread_of(values);
  return s ? std::optional<double>(s->median) : std::nullopt;
}

// ---- a test's cases together ----

std::string busbw_charts(const std::vector<const nlohmann::json*>& cases) {
  std::map<double, std::vector<Point>> by_qps;
  std::set<double> sizes;
  std::vector<Bar> bars;
  for (const nlohmann::json* c : cases) {
    const auto busbw = median_metric(*c, "busbw_gbps");
    if (!busbw) continue;
    bars.push_back({text(*c, "id"), *busbw, false});
    const auto size = number(member(*c, "parameters"), "size");
    if (!size) continue;
    sizes.insert(*size);
    by_qps[number(member(*c, "parameters"), "qps").value_or(1)].push_back({*size, *busbw});
  }
  if (sizes.size() >= 2) {
    LineChart chart{.title = "busbw vs message size",
                    .x_title = "message size",
                    .y_title = "busbw (Gbit/s)",
                    .x_axis = XAxis::log2_bytes,
                    .series = {}};
    for (auto& [qps, points] : by_qps) {
      std::sort(points.begin(), points.end(),
                [](const Point& a, const Point& b) { return a.x < b.x; });
      chart.series.push_back({fmt::format("qps={}", qps), points});
    }
    return figure(line_chart(chart),
                  "busbw vs message size, one line per QP count (median of the repeats)");
  }
  if (bars.size() < 2) return "";
  BarChart chart{.title = "busbw by case", .value_title = "busbw (Gbit/s)", .bars = bars};
  return figure(bar_chart(chart), "busbw by case (median of the repeats)");
}

// ---- one case ----

const nlohmann::json* last_measured(const nlohmann::json& c) {
  const auto repeats = measured_repeats(c);
  return repeats.empty() ? nullptr : repeats.back();
}

std::string iteration_chart(const std::string& id, const nlohmann::json& traffic_case) {
  Distribution d{.title = id + ": iteration time", .x_title = "iteration time (us)", .samples = {}};
  for (const auto& v : list(traffic_case, "iteration_us"))
    if (v.is_number()) d.samples.push_back(v.get<double>());
  if (d.samples.size() < 2) return "";
  // A time axis reads in the unit of its values: 107 ms, not "107k" microseconds.
  const double longest = *std::max_element(d.samples.begin(), d.samples.end());
  if (longest >= 1e7) {
    for (double& s : d.samples) s /= 1e6;
    d.x_title = "iteration time (s)";
  } else if (longest >= 1e4) {
    for (double& s : d.samples) s /= 1e3;
    d.x_title = "iteration time (ms)";
  }
  return figure(distribution_chart(d),
                "collective iteration time: the distribution over the measured iterations");
}

// A latency test's round trips, from the client's histogram: each ping drawn at its bucket's
// upper edge, where the percentiles (lat_p50_us, lat_p99_us) are taken too, so the markers sit
// on the values the thresholds graded. At most max_latency_samples: beyond, each bucket is
// scaled down alike (the shape is the histogram's).
constexpr std::size_t max_latency_samples = 200'000;
std::string latency_chart(const std::string& id, const nlohmann::json& traffic) {
  const nlohmann::json& latency = member(member(member(traffic, "client"), "results"), "latency");
  const nlohmann::json& buckets = list(latency, "histogram");
  double total = 0;
  for (const auto& b : buckets)
    if (b.is_array() && b.size() == 2 && b[1].is_number()) total += b[1].get<double>();
  if (total < 2) return "";
  const double scale = std::min(1.0, static_cast<double>(max_latency_samples) / total);
  Distribution d{.title = id + ": round-trip latency", .x_title = "latency (us)", .samples = {}};
  for (const auto& b : buckets) {
    if (!b.is_array() || b.size() != 2 || !b[0].is_number() || !b[1].is_number()) continue;
    const auto n = static_cast<std::size_t>(std::llround(b[1].get<double>() * scale));
    d.samples.insert(d.samples.end(), n, b[0].get<double>());
  }
  if (d.samples.size() < 2) return "";
  return figure(distribution_chart(d),
                fmt::format("the client's {} round trips after the warm-up, each at the upper "
                            "edge of its histogram bucket",
                            format_count(total)));
}

// The case's graded ecmp_imbalance threshold, if it has one: its limit and verdict.
struct ImbalanceGrade {
  double limit = 0;
  std::string verdict, text;
};
std::optional<ImbalanceGrade> imbalance_grade(const nlohmann::json& attempt) {
  for (const auto& t : list(member(attempt, "grade"), "thresholds")) {
    const std::string threshold = text(t, "threshold");
    if (!threshold.starts_with("ecmp_imbalance")) continue;
    const auto limit = number(t, "limit");
    if (!limit) continue;
    return ImbalanceGrade{*limit, text(t, "verdict"), threshold};
  }
  return std::nullopt;
}

std::string capture_bytes_chart(const std::string& id, const nlohmann::json& captures,
                                const nlohmann::json& attempt) {
  BarChart chart{.title = id + ": RoCE bytes per capture point",
                 .value_title = "RoCEv2 bytes the mirror saw",
                 .value_unit = "B",
                 .bars = {}};
  double sum = 0;
  for (const auto& p : captures) {
    const double bytes = number(member(member(p, "analysis"), "roce"), "bytes").value_or(0);
    chart.bars.push_back({fmt::format("{} ({})", text(p, "point"), text(p, "iface")), bytes});
    sum += bytes;
  }
  if (chart.bars.empty()) return "";
  const double mean = sum / static_cast<double>(chart.bars.size());
  std::string marks = "; no ecmp_imbalance threshold was graded, so no bar is marked";
  // Marked as graded: red only where the case's own imbalance threshold was not met, and only the
  // bars above its limit; a case that passed it shows none.
  if (const auto g = imbalance_grade(attempt); g && chart.bars.size() >= 2) {
    chart.reference = mean;
    if (g->verdict == "pass") {
      marks = fmt::format("; {} passed, so no bar is marked", g->text);
    } else {
      for (Bar& b : chart.bars) b.highlight = b.value > g->limit * mean;
      marks = fmt::format(
          "; red: above {:g} x the mean, the limit of {}, which this case did "
          "not meet ({})",
          g->limit, g->text, g->verdict);
    }
  }
  return figure(bar_chart(chart),
                "RoCE bytes per capture point; with one point per spine, unequal bars are ECMP "
                "imbalance" +
                    marks);
}

// The fabric's events of a case with their times: the agents' timeline's, else the switches'.
const nlohmann::json& case_events(const nlohmann::json& raw) {
  const nlohmann::json& agents = list(member(raw, "timeline"), "events");
  return !agents.empty() ? agents : list(member(raw, "switch_timeline"), "events");
}

// The points' timelines on one clock: each starts at its own first frame. With `origin_ns` (the
// traffic's start) on the case's time axis, the sender and switch charts' own, with the events.
std::string timeline(const std::string& id, const nlohmann::json& captures,
                     std::optional<double> origin_ns, const nlohmann::json& events) {
  std::optional<double> start_ns, bin_ms;
  for (const auto& p : captures) {
    const nlohmann::json& t = member(member(p, "analysis"), "timeline");
    const auto s = number(t, "start_ns");
    const auto b = number(t, "bin_ms");
    if (!s || !b || *b <= 0) continue;
    start_ns = start_ns ? std::min(*start_ns, *s) : *s;
    bin_ms = b;
  }
  if (!start_ns) return "";
  TimelineChart chart{.title = id + ": CNP and PFC over time",
                      .y_title = "frames per bin",
                      .bin_ms = *bin_ms,
                      .series = {{"CNP", {}}, {"PFC XOFF", {}}, {"ECN CE", {}}}};
  for (const auto& p : captures) {
    const nlohmann::json& t = member(member(p, "analysis"), "timeline");
    const auto s = number(t, "start_ns");
    if (!s || number(t, "bin_ms") != bin_ms) continue;  // another bin width: not comparable
    const double offset_ms = (*s - *start_ns) / 1e6;
    for (const auto& bin : list(t, "bins")) {
      const auto t_ms = number(bin, "t_ms");
      if (!t_ms) continue;
      const auto index = static_cast<std::size_t>(std::llround((offset_ms + *t_ms) / *bin_ms));
      if (index > 1'000'000) continue;  // a bogus timestamp, not a reason to allocate
      const char* keys[] = {"cnp", "pfc_xoff", "ecn_ce"};
      for (std::size_t k = 0; k < 3; ++k) {
        auto& values = chart.series[k].values;
        if (values.size() <= index) values.resize(index + 1, 0.0);
        values[index] += number(bin, keys[k]).value_or(0);
      }
    }
  }
  std::size_t bins = 0;
  for (auto& s : chart.series) bins = std::max(bins, s.values.size());
  if (bins == 0) return "";
  for (auto& s : chart.series) s.values.resize(bins, 0.0);
  if (origin_ns) {
    chart.start_ms = (*start_ns - *origin_ns) / 1e6;
    chart.time_unit = TimeUnit::s;
    chart.x_title = "time (s) from the traffic's start";
    for (const auto& e : events)
      if (const auto at = number(e, "at_ns"))
        chart.markers.push_back({(*at - *origin_ns) / 1e6, text(e, "what")});
  }
  return figure(timeline_chart(chart),
                fmt::format("CNPs, PFC XOFF frames and CE-marked packets the mirrors saw, per "
                            "{} ms, summed over the capture points",
                            *bin_ms));
}

// A counter's samples as a rate: one point per interval, at its end, in Gbit/s on the seconds
// `at_s` gives a time. An interval with a gap at either end (a poll not answered: null), or no
// time between its ends, has none.
std::vector<Point> rates_between_samples(const nlohmann::json& times, const nlohmann::json& bytes,
                                         const std::function<double(double)>& at_s) {
  std::vector<Point> points;
  if (times.size() != bytes.size()) return points;
  for (std::size_t i = 1; i < times.size(); ++i) {
    if (!times[i].is_number() || !times[i - 1].is_number() || !bytes[i].is_number() ||
        !bytes[i - 1].is_number())
      continue;
    const double seconds = at_s(times[i].get<double>()) - at_s(times[i - 1].get<double>());
    if (seconds <= 0) continue;
    const double bits = (bytes[i].get<double>() - bytes[i - 1].get<double>()) * 8;
    points.push_back({at_s(times[i].get<double>()), bits / seconds / 1e9});
  }
  return points;
}

// The origin of a case's time charts: the traffic's start, as the switches' timeline counts from
// it; without one, the earliest agent's start (the agreed start, the same instant when all agree).
std::optional<double> traffic_origin_ns(const nlohmann::json& raw) {
  if (const auto at = number(member(raw, "switch_timeline"), "start_ns")) return at;
  std::optional<double> origin;
  for (const auto& s : list(member(raw, "timeline"), "senders"))
    if (const auto at = number(s, "start_ns")) origin = origin ? std::min(*origin, *at) : *at;
  return origin;
}

void add_event_markers(LineChart& chart, const nlohmann::json& events, double origin_ns) {
  for (const auto& e : events)
    if (const auto at = number(e, "at_ns"))
      chart.markers.push_back({(*at - origin_ns) / 1e9, text(e, "what")});
}

// Each bw sender's delivered rate (a collective rank's received rate) over the case, from the
// agents' 10 ms samples, the fabric's events as dashed lines: the picture a failover is read from.
// The first `max_sender_lines` senders only: a thousand ranks' lines would be one blot.
constexpr std::size_t max_sender_lines = 16;
std::string sender_rates_chart(const std::string& id, const nlohmann::json& timeline,
                               double origin_ns) {
  const nlohmann::json& senders = list(timeline, "senders");
  LineChart chart{.title = id + ": delivered rate per sender",
                  .x_title = "time (s) from the traffic's start",
                  .y_title = "Gbit/s",
                  .x_axis = XAxis::linear,
                  .series = {}};
  for (const auto& s : senders) {
    if (chart.series.size() == max_sender_lines) break;
    const double offset_s = (number(s, "start_ns").value_or(origin_ns) - origin_ns) / 1e9;
    LineSeries series{
        .name = text(s, "sender"),
        .points = rates_between_samples(list(s, "t_us"), list(s, "bytes"),
                                        [offset_s](double t_us) { return offset_s + t_us / 1e6; }),
        .links = {}};
    if (!series.points.empty()) chart.series.push_back(std::move(series));
  }
  if (chart.series.empty()) return "";
  add_event_markers(chart, list(timeline, "events"), origin_ns);
  const std::string drawn =
      senders.size() > max_sender_lines
          ? fmt::format(" (the first {} of {} senders; run.json has them all)", chart.series.size(),
                        senders.size())
          : std::string();
  return figure(line_chart(chart),
                "each bw sender's completed bytes (a collective rank's received bytes) per 10 ms "
                "as a rate" +
                    drawn +
                    "; dashed: the fabric events (a stall is a run at 0, a recovery the climb "
                    "back after an event)");
}

// The rate each switch port sent at between its polls (raw.switch_timeline), with the events:
// a failover reads as one uplink's line falling to 0 and another's rising. On the sender chart's
// axis.
std::string switch_port_rates_chart(const std::string& id, const nlohmann::json& timeline,
                                    double origin_ns) {
  const auto start_ns = number(timeline, "start_ns");
  if (!start_ns) return "";
  const double offset_s = (*start_ns - origin_ns) / 1e9;
  LineChart chart{.title = id + ": rate per switch port (polled)",
                  .x_title = "time (s) from the traffic's start",
                  .y_title = "Gbit/s",
                  .x_axis = XAxis::linear,
                  .series = {}};
  for (const auto& p : list(timeline, "ports")) {
    LineSeries series{
        .name = fmt::format("{}->{} ({}:{})", text(p, "switch"), text(p, "to"), text(p, "switch"),
                            text(p, "port")),
        .points = rates_between_samples(list(p, "t_ms"), list(p, "sent_bytes"),
                                        [offset_s](double t_ms) { return offset_s + t_ms / 1e3; }),
        .links = {}};
    if (!series.points.empty()) chart.series.push_back(std::move(series));
  }
  if (chart.series.empty()) return "";
  add_event_markers(chart, list(timeline, "events"), origin_ns);
  return figure(line_chart(chart),
                fmt::format("the bytes each switch port sent between polls (every {:g} ms) as a "
                            "rate; dashed: the fabric events (a failover: one uplink falls, "
                            "another rises)",
                            number(timeline, "period_ms").value_or(0)));
}

std::string qp_rates_chart(const std::string& id, const nlohmann::json& traffic) {
  std::vector<Bar> bars;
  const auto qpn = [](const nlohmann::json& q) {
    return fmt::format("{:#x}", static_cast<std::uint64_t>(number(q, "qpn").value_or(0)));
  };
  const nlohmann::json& collective = list(traffic, "cases");
  std::size_t receive_only = 0;  // QPs the plan never sends on: idle by design, not drawn
  if (!collective.empty()) {
    for (const auto& r : list(collective[0], "per_rank"))
      for (const auto& q : list(r, "per_qp"))
        if (const nlohmann::json& sends = member(q, "sends"); sends.is_boolean() && !sends)
          ++receive_only;
        else if (const auto g = number(q, "gbps"))
          bars.push_back({fmt::format("r{} -> r{} qp {}", number(r, "rank").value_or(-1),
                                      number(q, "peer").value_or(-1), qpn(q)),
                          *g});
  } else {
    const nlohmann::json& client = member(traffic, "client");
    for (const auto& q : list(member(client, "results"), "per_qp"))
      if (const auto g = number(q, "gbps"))
        bars.push_back({fmt::format("{} qp {}", text(client, "name"), qpn(q)), *g});
  }
  // A latency test's QPs move too little to have a rate worth a chart.
  if (std::none_of(bars.begin(), bars.end(), [](const Bar& b) { return b.value > 0; })) return "";
  std::string note;
  if (receive_only > 0)
    note = fmt::format(
        " ({} QPs that only receive by the plan, such as a ring's to its previous "
        "rank, are not drawn)",
        receive_only);
  if (bars.size() > max_qp_bars) {
    std::stable_sort(bars.begin(), bars.end(),
                     [](const Bar& a, const Bar& b) { return a.value < b.value; });
    note += fmt::format(" (the {} slowest of {})", max_qp_bars, bars.size());
    bars.resize(max_qp_bars);
  }
  double sum = 0;
  for (const Bar& b : bars) sum += b.value;
  BarChart chart{.title = id + ": per-QP rate",
                 .value_title = "Gbit/s",
                 .bars = bars,
                 .reference = sum / static_cast<double>(bars.size())};
  return figure(bar_chart(chart), "each QP's rate over the measured run" + note);
}

std::string pairwise_chart(const std::string& id, const nlohmann::json& traffic) {
  const nlohmann::json& cases = list(traffic, "cases");
  if (cases.empty()) return "";
  const nlohmann::json& pairwise = member(cases[0], "pairwise");
  const nlohmann::json& rows = list(pairwise, "gbps");
  if (rows.empty()) return "";
  Heatmap chart{.title = id + ": pairwise bandwidth", .value_unit = "Gbit/s"};
  std::map<int, std::string> host_of;
  for (const auto& r : list(traffic, "ranks"))
    host_of[static_cast<int>(number(r, "rank").value_or(-1))] = text(r, "host");
  for (std::size_t a = 0; a < rows.size(); ++a) {
    const std::string label = fmt::format("r{} {}", a, host_of[static_cast<int>(a)]);
    chart.row_labels.push_back(label);
    chart.column_labels.push_back(label);
    std::vector<double> row;
    for (const auto& v : rows[a]) row.push_back(v.is_number() ? v.get<double>() : std::nan(""));
    if (a < row.size()) row[a] = std::nan("");  // a rank with itself: no pair
    chart.values.push_back(std::move(row));
  }
  for (const auto& o : list(pairwise, "outliers")) {
    const auto a = number(o, "a"), b = number(o, "b");
    if (a && b && *a >= 0 && *b >= 0)
      chart.outliers.push_back({static_cast<std::size_t>(*a), static_cast<std::size_t>(*b)});
  }
  std::string suspects;
  for (const auto& s : list(pairwise, "suspects")) {
    if (!suspects.empty()) suspects += ", ";
    suspects += s.dump();
  }
  return figure(heatmap(chart),
                fmt::format("pairwise bandwidth, sender by row (median {:.3g} Gbit/s); outlined: "
                            "pairs under 80 % of the median{}",
                            number(pairwise, "median_gbps").value_or(0),
                            suspects.empty() ? "" : "; suspect ranks " + suspects));
}

}  // namespace

std::string test_charts(const std::vector<const nlohmann::json*>& cases) {
  return charts_div(busbw_charts(cases));
}

std::string case_charts(const nlohmann::json& c) {
  const nlohmann::json* attempt = last_measured(c);
  if (attempt == nullptr) return "";
  const std::string id = text(c, "id");
  const nlohmann::json& raw = member(*attempt, "raw");
  const nlohmann::json& traffic = member(raw, "traffic");
  const nlohmann::json& captures = list(raw, "captures");
  std::string figures;
  if (const nlohmann::json& cases = list(traffic, "cases"); !cases.empty())
    figures += iteration_chart(id, cases[0]);
  figures += latency_chart(id, traffic);
  figures += capture_bytes_chart(id, captures, *attempt);
  const auto origin_ns = traffic_origin_ns(raw);
  figures += timeline(id, captures, origin_ns, case_events(raw));
  if (origin_ns) {
    figures += sender_rates_chart(id, member(raw, "timeline"), *origin_ns);
    figures += switch_port_rates_chart(id, member(raw, "switch_timeline"), *origin_ns);
  }
  figures += qp_rates_chart(id, traffic);
  figures += pairwise_chart(id, traffic);
  return charts_div(figures);
}

}  // namespace rocehil::reports
