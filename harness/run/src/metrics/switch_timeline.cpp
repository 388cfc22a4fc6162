#include "rocehil/run/switch_timeline.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

namespace rocehil::run {

namespace {

constexpr double before_ns = 1e9;       // the rate before an event: over up to its last second
constexpr double carried_share = 0.05;  // a link carried traffic: 5% of the delivered rate
constexpr double carried_floor_gbps = 0.001;

bool listed(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

double gbps_over_ns(double bytes, double ns) {
  return ns > 0 ? bytes * 8 / ns : 0;
}

// The bytes sent to the case's hosts at each sample: the host-facing ports' sum, or nothing
// where any of them has a gap. Empty when no port faces a case host.
std::vector<std::optional<double>> delivered(const std::vector<PortSeries>& series,
                                             const std::vector<std::int64_t>*& at_ns) {
  std::vector<std::optional<double>> sum;
  at_ns = nullptr;
  for (const PortSeries& s : series) {
    if (!s.port.to_case_host) continue;
    if (!at_ns) {
      at_ns = &s.at_ns;
      sum.assign(s.sent_bytes.size(), 0.0);
    }
    for (std::size_t i = 0; i < sum.size() && i < s.sent_bytes.size(); ++i)
      sum[i] = sum[i] && s.sent_bytes[i] ? std::optional(*sum[i] + *s.sent_bytes[i]) : std::nullopt;
  }
  return sum;
}

// Samples [from, to] of one series: its rate, or nothing across a gap.
std::optional<double> rate_gbps(const std::vector<std::int64_t>& at_ns,
                                const std::vector<std::optional<double>>& bytes, std::size_t from,
                                std::size_t to) {
  if (to <= from || to >= bytes.size() || !bytes[from] || !bytes[to]) return std::nullopt;
  return gbps_over_ns(*bytes[to] - *bytes[from], static_cast<double>(at_ns[to] - at_ns[from]));
}

// The sample indexes an event's analysis reads: the second before it, the first poll after it,
// and where the recovered interval begins.
struct EventSpan {
  std::optional<std::size_t> before_from, before_to, recovered_at;
};

EventSpan span_of(const std::vector<std::int64_t>& at_ns, std::int64_t event_ns) {
  EventSpan s;
  for (std::size_t i = 0; i < at_ns.size(); ++i) {
    if (at_ns[i] > event_ns) break;
    if (!s.before_from && static_cast<double>(event_ns - at_ns[i]) <= before_ns) s.before_from = i;
    s.before_to = i;
  }
  return s;
}

}  // namespace

std::vector<FabricPort> fabric_ports(const inventory::Inventory& inventory,
                                     const std::vector<std::string>& switch_names,
                                     const std::vector<std::string>& case_hosts) {
  std::vector<FabricPort> out;
  for (const inventory::Link& l : inventory.links)
    for (const auto& [here, there] : {std::pair{&l.a, &l.b}, std::pair{&l.b, &l.a}})
      if (listed(switch_names, here->node) && !here->port.empty())
        out.push_back(
            {here->node, here->port, l.name, there->node, listed(case_hosts, there->node)});
  return out;
}

std::vector<PortSeries> port_series(const std::vector<FabricPort>& ports,
                                    const std::vector<SwitchSample>& samples) {
  std::vector<PortSeries> out;
  for (const FabricPort& p : ports) {
    PortSeries s{p, {}, {}};
    std::optional<double> first, last;
    bool went_back = false;  // an agent that restarted: the rest of the case is a gap
    for (const SwitchSample& sample : samples) {
      const auto sw = std::find_if(sample.begin(), sample.end(),
                                   [&](const auto& x) { return x.switch_name == p.switch_name; });
      std::optional<double> sent;
      std::int64_t at = sample.empty() ? 0 : sample.front().unix_ns;
      if (sw != sample.end()) {
        at = sw->unix_ns;
        const switches::PortCounters* pc = sw->answered() ? sw->find_port(p.port) : nullptr;
        if (pc && pc->out_octets && !went_back) {
          const auto v = static_cast<double>(pc->out_octets->value);
          went_back = last && v < *last;
          if (!went_back) {
            if (!first) first = v;
            sent = v - *first;
            last = v;
          }
        }
      }
      s.at_ns.push_back(at);
      s.sent_bytes.push_back(sent);
    }
    out.push_back(std::move(s));
  }
  return out;
}

FabricRecovery fabric_recovery_after(const std::vector<PortSeries>& series, std::int64_t event_ns,
                                     double share) {
  FabricRecovery r;
  const std::vector<std::int64_t>* at_ns = nullptr;
  const auto sent = delivered(series, at_ns);
  if (!at_ns) {
    r.why = "no polled switch port faces the case's hosts (inventory links)";
    return r;
  }
  const EventSpan span = span_of(*at_ns, event_ns);
  const auto before = span.before_from && span.before_to
                          ? rate_gbps(*at_ns, sent, *span.before_from, *span.before_to)
                          : std::nullopt;
  if (!before) {
    r.why = "no two polls of the switches answered in the second before the event";
    return r;
  }
  r.rate_before_gbps = *before;
  if (*before <= 0) {
    r.why = "the switches delivered nothing to the case's hosts in the second before the event";
    return r;
  }
  for (std::size_t i = *span.before_to + 1; i + 1 < sent.size(); ++i)
    if (const auto rate = rate_gbps(*at_ns, sent, i, i + 1); rate && *rate >= share * *before) {
      r.ms = static_cast<double>((*at_ns)[i] - event_ns) / 1e6;
      return r;
    }
  if (*span.before_to + 1 >= at_ns->size()) {
    r.why = "no poll of the switches after the event";
    return r;
  }
  r.never = true;
  r.ms = static_cast<double>(at_ns->back() - event_ns) / 1e6;
  r.why = fmt::format(
      "the switches delivered under {:.0f}% of {:.3g} Gbit/s to the case's hosts "
      "from the event to the last poll, {:.0f} ms later",
      share * 100, *before, *r.ms);
  return r;
}

nlohmann::json switch_timeline_json(const std::vector<PortSeries>& series,
                                    const std::vector<EventTime>& events, double period_ms,
                                    std::int64_t start_ns) {
  nlohmann::json out{{"period_ms", period_ms},
                     {"start_ns", start_ns},
                     {"ports", nlohmann::json::array()},
                     {"events", nlohmann::json::array()}};
  double busiest = 0;
  for (const PortSeries& s : series)
    for (const auto& b : s.sent_bytes)
      if (b) busiest = std::max(busiest, *b);
  for (const PortSeries& s : series) {
    double most = 0;
    for (const auto& b : s.sent_bytes)
      if (b) most = std::max(most, *b);
    // Idle ports (control traffic at most: under 0.1% of the busiest, where one QP's ACKs of
    // eight are 1%) are left out; every port to a case host is kept, so
    // the fabric's recovery can be worked out again from what run.json holds.
    if (!s.port.to_case_host && (most <= 0 || most < 0.001 * busiest)) continue;
    nlohmann::json p{{"switch", s.port.switch_name},
                     {"port", s.port.port},
                     {"link", s.port.link},
                     {"to", s.port.peer},
                     {"to_case_host", s.port.to_case_host}};
    nlohmann::json t = nlohmann::json::array(), b = nlohmann::json::array();
    for (std::size_t i = 0; i < s.at_ns.size(); ++i) {
      t.push_back(static_cast<double>(s.at_ns[i] - start_ns) / 1e6);
      b.push_back(s.sent_bytes[i] ? nlohmann::json(*s.sent_bytes[i]) : nlohmann::json());
    }
    p["t_ms"] = std::move(t);
    p["sent_bytes"] = std::move(b);
    out["ports"].push_back(std::move(p));
  }

  for (std::size_t e = 0; e < events.size(); ++e) {
    const EventTime& event = events[e];
    const FabricRecovery r = fabric_recovery_after(series, event.at_ns);
    nlohmann::json je{
        {"what", event.what}, {"at_ns", event.at_ns}, {"rate_before_gbps", r.rate_before_gbps}};
    if (r.ms) {
      je["recovery_ms"] = *r.ms;
      je["recovered"] = !r.never;
    }
    if (!r.why.empty()) je["why"] = r.why;
    const double floor = std::max(carried_share * r.rate_before_gbps, carried_floor_gbps);
    const std::int64_t next_ns =
        e + 1 < events.size() ? events[e + 1].at_ns : std::numeric_limits<std::int64_t>::max();
    // The links that carried traffic over samples [from, to] (the ports toward a case host
    // included: the last hop).
    const auto carried = [&](std::size_t from, std::size_t to) {
      nlohmann::json links = nlohmann::json::array();
      for (const PortSeries& s : series)
        if (const auto rate = rate_gbps(s.at_ns, s.sent_bytes, from, to); rate && *rate >= floor)
          links.push_back({{"link", s.port.link},
                           {"switch", s.port.switch_name},
                           {"port", s.port.port},
                           {"to", s.port.peer},
                           {"gbps", *rate}});
      return links;
    };
    if (!series.empty()) {
      const auto& at = series.front().at_ns;
      const EventSpan span = span_of(at, event.at_ns);
      if (span.before_from && span.before_to && *span.before_to > *span.before_from)
        je["before"] = carried(*span.before_from, *span.before_to);
      if (span.before_to && r.ms) {
        // From the last poll before the event to the start of the recovered interval (at
        // least the next poll); after: from there to the last poll before the next event.
        std::size_t back = *span.before_to + 1;
        while (back + 1 < at.size() && static_cast<double>(at[back] - event.at_ns) / 1e6 < *r.ms)
          ++back;
        // During: from the first poll after the event (the interval holding the event when
        // that is already the recovered one).
        je["during"] =
            carried(*span.before_to + 1 < back ? *span.before_to + 1 : *span.before_to, back);
        if (!r.never) {
          std::size_t end = back;
          while (end + 1 < at.size() && at[end + 1] <= next_ns) ++end;
          if (end > back) je["after"] = carried(back, end);
        }
      }
    }
    out["events"].push_back(std::move(je));
  }
  return out;
}

suites::Measured switch_recovery_metrics(const nlohmann::json& timeline) {
  suites::Measured m;
  std::optional<double> worst;
  std::string where, why = "no fabric event happened in this case";
  for (const auto& e : timeline.value("events", nlohmann::json::array())) {
    if (!e.contains("recovery_ms")) {
      why = e.value("why", std::string("no recovery read"));
      continue;
    }
    const double ms = e["recovery_ms"].get<double>();
    if (worst && ms <= *worst) continue;
    worst = ms;
    const std::string what = e.value("what", std::string());
    where = e.value("recovered", false)
                ? fmt::format("after {}", what)
                : fmt::format("after {}: at least that: {}", what, e.value("why", std::string()));
  }
  if (worst) {
    m.values["switch_recovery_ms"] = *worst;
    m.where["switch_recovery_ms"] = where;
  } else {
    m.absent("switch_recovery_ms", why);
  }
  return m;
}

}  // namespace rocehil::run
