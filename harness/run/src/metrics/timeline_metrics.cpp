#include "rocehil/run/timeline_metrics.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

namespace rocehil::run {

namespace {

constexpr double window_us = 100'000;    // a rate after the event is taken over 100 ms
constexpr double before_us = 1'000'000;  // and the rate before it over up to a second

// Bytes delivered by t_us, linear between samples, held at the ends.
double bytes_at(const agent::ProgressTimeline& t, double t_us) {
  const auto& x = t.t_us;
  if (x.empty()) return 0;
  if (t_us <= static_cast<double>(x.front())) return static_cast<double>(t.bytes.front());
  if (t_us >= static_cast<double>(x.back())) return static_cast<double>(t.bytes.back());
  const auto hi = std::upper_bound(x.begin(), x.end(), t_us, [](double v, std::uint64_t s) {
    return v < static_cast<double>(s);
  });
  const std::size_t i = static_cast<std::size_t>(hi - x.begin());
  const double t0 = static_cast<double>(x[i - 1]), t1 = static_cast<double>(x[i]);
  const double b0 = static_cast<double>(t.bytes[i - 1]), b1 = static_cast<double>(t.bytes[i]);
  return t1 == t0 ? b1 : b0 + (b1 - b0) * (t_us - t0) / (t1 - t0);
}

std::optional<std::size_t> first_byte(const agent::ProgressTimeline& t) {
  for (std::size_t i = 0; i < t.bytes.size(); ++i)
    if (t.bytes[i] > t.bytes.front()) return i;
  return std::nullopt;
}

double gbps(double bytes, double us) {
  return us > 0 ? bytes * 8 / (us * 1e3) : 0;
}

}  // namespace

std::optional<Stall> longest_stall(const agent::ProgressTimeline& t) {
  const auto first = first_byte(t);
  if (!first) return std::nullopt;
  Stall out;
  std::size_t last_growth = *first;
  for (std::size_t i = *first + 1; i < t.bytes.size(); ++i) {
    const bool grew = t.bytes[i] > t.bytes[i - 1];
    const bool end = i + 1 == t.bytes.size();
    if (!grew && !end) continue;
    // Nothing moved from the sample at last_growth to the one before i; at i it moved (or the
    // timeline ends there, still stalled).
    const std::size_t until = grew ? i - 1 : i;
    const double ms = static_cast<double>(t.t_us[until] - t.t_us[last_growth]) / 1e3;
    if (ms > out.ms) {
      out.ms = ms;
      out.from_s = static_cast<double>(t.t_us[last_growth]) / 1e6;
    }
    if (grew) last_growth = i;
  }
  return out;
}

Recovery recovery_after(const agent::ProgressTimeline& t, std::int64_t event_ns, double share) {
  Recovery r;
  const auto first = first_byte(t);
  if (t.t_us.size() < 2 || !first) {
    r.why = "it moved nothing";
    return r;
  }
  const double event_us = static_cast<double>(event_ns - t.start_ns) / 1e3;
  const double began_us = static_cast<double>(t.t_us[*first - 1]);
  const double ended_us = static_cast<double>(t.t_us.back());
  if (event_us < began_us + window_us || event_us > ended_us) {
    r.why = "it was not sending across the event";
    return r;
  }
  const double from_us = std::max(began_us, event_us - before_us);
  const double before = bytes_at(t, event_us) - bytes_at(t, from_us);
  r.rate_before_gbps = gbps(before, event_us - from_us);
  if (before <= 0) {
    r.why = "it moved nothing in the second before the event";
    return r;
  }
  const double need = share * before / (event_us - from_us) * window_us;
  // Each window starts at a sample (or the event): the first whose 100 ms carried enough.
  std::vector<double> starts{event_us};
  for (const std::uint64_t s : t.t_us)
    if (static_cast<double>(s) > event_us) starts.push_back(static_cast<double>(s));
  const auto shortfall = [&](double until_us) {
    const double expected = before / (event_us - from_us) * (until_us - event_us);
    return std::max(0.0, expected - (bytes_at(t, until_us) - bytes_at(t, event_us)));
  };
  for (const double s : starts) {
    if (s + window_us > ended_us) break;
    if (bytes_at(t, s + window_us) - bytes_at(t, s) >= need) {
      r.ms = (s - event_us) / 1e3;
      r.shortfall_bytes = shortfall(s);
      return r;
    }
  }
  r.never = true;
  r.ms = (ended_us - event_us) / 1e3;
  r.shortfall_bytes = shortfall(ended_us);
  r.why = fmt::format(
      "it stayed under {:.0f}% of its {:.3g} Gbit/s from the event to its end, "
      "{:.0f} ms later",
      share * 100, r.rate_before_gbps, *r.ms);
  return r;
}

std::vector<QpStallSeen> qp_stalls_of(const agent::ResultsEvent& sender, const std::string& peer) {
  std::vector<QpStallSeen> out;
  for (const agent::QpResult& q : sender.per_qp)
    if (q.stall_us && q.stall_from_us)
      out.push_back({.qpn = q.qpn,
                     .peer = peer,
                     .ms = static_cast<double>(*q.stall_us) / 1e3,
                     .from_s = static_cast<double>(*q.stall_from_us) / 1e6});
  return out;
}

suites::Measured timeline_metrics(const std::vector<SenderTimeline>& senders,
                                  const std::vector<EventTime>& events, nlohmann::json& raw) {
  suites::Measured m;
  raw = nlohmann::json::object();
  raw["senders"] = nlohmann::json::array();
  if (senders.empty()) {
    const std::string why =
        "no sender reported a timeline (bw senders and collective ranks of the rocehil engine "
        "do; perftest and iperf3 do not)";
    m.absent("max_stall_ms", why);
    m.absent("recovery_ms", why);
    return m;
  }
  std::optional<Stall> worst_stall;
  std::string stalled;
  for (const SenderTimeline& s : senders) {
    nlohmann::json j{{"sender", s.sender},
                     {"start_ns", s.timeline.start_ns},
                     {"period_us", s.timeline.period_us},
                     {"t_us", s.timeline.t_us},
                     {"bytes", s.timeline.bytes}};
    if (const auto stall = longest_stall(s.timeline)) {
      j["max_stall_ms"] = stall->ms;
      if (!worst_stall || stall->ms > worst_stall->ms) {
        worst_stall = stall;
        stalled = s.sender;
      }
    }
    // A QP the fabric stopped while the others carried the sender's rate: its total hides it.
    for (const QpStallSeen& q : s.qp_stalls) {
      if (!j.contains("max_qp_stall_ms") || q.ms > j["max_qp_stall_ms"].get<double>())
        j["max_qp_stall_ms"] = q.ms;
      if (worst_stall && q.ms <= worst_stall->ms) continue;
      worst_stall = Stall{.ms = q.ms, .from_s = q.from_s};
      stalled = fmt::format("{}: QP {:#x} to {}", s.sender, q.qpn, q.peer);
    }
    raw["senders"].push_back(std::move(j));
  }
  if (worst_stall) {
    m.values["max_stall_ms"] = worst_stall->ms;
    m.where["max_stall_ms"] =
        fmt::format("{}: {:.0f} ms from +{:.2f} s", stalled, worst_stall->ms, worst_stall->from_s);
  } else {
    m.absent("max_stall_ms", "no sender delivered a byte");
  }

  raw["events"] = nlohmann::json::array();
  if (events.empty()) {
    m.absent("recovery_ms", "no fabric event happened in this case (`events:`)");
    return m;
  }
  std::optional<double> worst;
  std::string worst_at;
  std::vector<std::string> never_back;  // "h1 after link_down l1-s1", every one of them
  for (const EventTime& e : events) {
    nlohmann::json je{{"what", e.what}, {"at_ns", e.at_ns}, {"senders", nlohmann::json::array()}};
    for (const SenderTimeline& s : senders) {
      const Recovery r = recovery_after(s.timeline, e.at_ns);
      nlohmann::json js{{"sender", s.sender}, {"rate_before_gbps", r.rate_before_gbps}};
      if (r.ms) {
        js["recovery_ms"] = *r.ms;
        js["recovered"] = !r.never;
        js["shortfall_bytes"] = r.shortfall_bytes;
        if (r.never) never_back.push_back(fmt::format("{} after {}", s.sender, e.what));
        if (!worst || *r.ms > *worst) {
          worst = r.ms;
          worst_at = r.never
                         ? fmt::format("{} after {}: at least that: {}", s.sender, e.what, r.why)
                         : fmt::format("{} after {}", s.sender, e.what);
        }
      }
      if (!r.why.empty()) js["why"] = r.why;
      je["senders"].push_back(std::move(js));
    }
    raw["events"].push_back(std::move(je));
  }
  // Every flow that never came back is named: the one to look at may not be the longest.
  if (never_back.size() > 1)
    worst_at += fmt::format("; never back: {}", fmt::join(never_back, ", "));
  // A flow that never came back counts the time to its end: at least that long, and a
  // threshold on it fails naming the flow.
  if (worst) {
    m.values["recovery_ms"] = *worst;
    m.where["recovery_ms"] = worst_at;
  } else {
    m.absent("recovery_ms", "no sender was sending across an event");
  }
  return m;
}

}  // namespace rocehil::run
