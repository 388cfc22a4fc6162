#include "rocehil/run/case_metrics.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>
#include <set>

#include "rocehil/run/fairness.hpp"

namespace rocehil::run {

namespace {

// The per-QP counters behind a metric, and the NIC metric that measures the same thing where the
// provider cannot count per QP.
struct QpCounterMetric {
  std::string_view metric;
  traffic::QpCounter counter;
  std::string_view instead;
};
constexpr QpCounterMetric qp_counter_metrics[] = {
    {"retransmits", traffic::QpCounter::retransmitted_packets, "nic_retransmits"},
    {"timeouts", traffic::QpCounter::timeouts, "nic_ack_timeouts"},
    {"naks", traffic::QpCounter::naks_received, "nic_seq_errors"},
    {"cnps", traffic::QpCounter::cnps_handled, "nic_cnps_handled"},
};

// retransmits, timeouts, naks and cnps: every QP's counters of every report, summed, or absent
// with the reason when any QP's provider did not count it (verbs: an RNIC counts per port).
void add_qp_counters(suites::Measured& m, const std::vector<const agent::ResultsEvent*>& reports,
                     std::string_view provider) {
  for (const QpCounterMetric& q : qp_counter_metrics) {
    double sum = 0;
    bool measured = true;
    for (const agent::ResultsEvent* r : reports)
      for (const auto& qp : r->per_qp) {
        measured = measured && qp.counters.has(q.counter);
        sum += static_cast<double>(qp.counters.value(q.counter));
      }
    if (measured)
      m.values[std::string(q.metric)] = sum;
    else
      m.absent(std::string(q.metric),
               fmt::format("the {} provider has no per-QP {} counter (an RNIC counts per port, "
                           "not per QP); use {}, from the NICs' own counters",
                           provider, traffic::to_string(q.counter), q.instead));
  }
}

// Each sending rank's rate while it sent: its bytes over the time its steps took (posting to
// completion, summed over the measured iterations). Over the whole run every rank of a
// collective keeps the same pace (each iteration waits for the slowest); inside a step a sender
// the fabric favours finishes sooner. A rank that sends nothing (an incast's receiver) is no
// sender.
void add_collective_fairness(suites::Measured& m, const CollectiveCase& c) {
  std::vector<double> rates;
  std::string why;
  for (std::size_t r = 0; r < c.results.size(); ++r) {
    const auto& report = c.results[r].collective;
    if (!report || report->bytes_sent == 0) continue;
    const std::uint64_t busy_ns =
        std::accumulate(report->step_ns.begin(), report->step_ns.end(), std::uint64_t{0});
    if (busy_ns == 0) {
      why = fmt::format(
          "rank {} reported no per-step times (a rank reports them up to {} steps per "
          "iteration); its rate while sending is not known",
          r, agent::max_steps_reported);
      break;
    }
    rates.push_back(static_cast<double>(report->bytes_sent) * 8 / static_cast<double>(busy_ns));
  }
  add_fairness(m, rates, "sending ranks", why);
}

}  // namespace

suites::Measured collective_metrics(const CollectiveCase& c, std::string_view provider) {
  const auto& s = c.summary;
  suites::Measured m;
  m.values = {{"busbw_gbps", s.busbw_gbps}, {"algbw_gbps", s.algbw_gbytes_s * 8},
              {"time_us", s.time_us},       {"time_p99_us", s.time_p99_us},
              {"time_cv", s.time_cv},       {"errors", static_cast<double>(c.errors)}};
  std::vector<const agent::ResultsEvent*> reports;
  for (const auto& r : c.results) reports.push_back(&r);
  add_qp_counters(m, reports, provider);
  add_collective_fairness(m, c);
  if (c.verified || c.wrong > 0)
    m.values["data_errors"] = c.wrong;
  else if (c.job.plan.pattern == traffic::Pattern::incast)
    m.absent("data_errors",
             "an incast's receiver output has no single right answer (every sender writes into "
             "its one buffer at once): no incast's data is checked");
  else
    m.absent("data_errors", "the ranks' output was not checked (a buffer is not in host memory)");
  return m;
}

suites::Values collective_names(const CollectiveCase& c, const std::vector<std::string>& hosts,
                                const std::vector<double>& link_gbps) {
  suites::Values v{{"n", c.job.plan.ranks},
                   {"qps", c.job.scaling.qps},
                   {"size", static_cast<double>(c.job.plan.bytes)}};
  v["hosts"] = static_cast<double>(std::set<std::string>(hosts.begin(), hosts.end()).size());
  double slowest = 0;
  for (const double g : link_gbps)
    if (g > 0 && (slowest == 0 || g < slowest)) slowest = g;
  if (slowest > 0) v["link_gbps"] = slowest;
  return v;
}

suites::Measured point_to_point_metrics(const PointToPointResult& r, std::string_view provider) {
  const agent::ResultsEvent& client = r.client.results;
  const agent::ResultsEvent& server = r.server.results;
  suites::Measured m;
  add_qp_counters(m, {&client, &server}, provider);
  m.values["errors"] = static_cast<double>(client.errors + server.errors);
  // Each side's first error, in its NIC's words where it gave some, beside a failing threshold.
  std::string first_errors;
  for (const SideReport* side : {&r.client, &r.server}) {
    if (side->results.errors == 0 || side->results.first_error.empty()) continue;
    if (!first_errors.empty()) first_errors += "; ";
    first_errors += fmt::format("{}: {}", side->name, side->results.first_error);
  }
  if (!first_errors.empty()) m.where["errors"] = first_errors;
  if (client.workload == agent::Workload::lat) {
    if (client.latency && client.latency->samples > 0) {
      m.values["lat_p50_us"] = client.latency->p50_us;
      m.values["lat_p99_us"] = client.latency->p99_us;
      m.values["lat_max_us"] = client.latency->max_us;
      m.values["lat_avg_us"] = client.latency->mean_us;
    } else {
      for (const char* key : {"lat_p50_us", "lat_p99_us", "lat_max_us", "lat_avg_us"})
        m.absent(key, "no ping-pong completed after the warm-up");
    }
    return m;
  }
  const double gbps = server.bytes > 0 ? server.gbps : client.gbps;
  m.values["busbw_gbps"] = gbps;
  m.values["algbw_gbps"] = gbps;
  // The sender's QPs: how evenly QP scaling spread the pair's traffic.
  std::vector<double> rates;
  for (const agent::QpResult& q : client.per_qp) rates.push_back(q.gbps);
  add_fairness(m, rates, "QPs",
               client.per_qp.empty() ? "the sender reported no per-QP rates" : std::string());
  if (r.data.checked)
    m.values["data_errors"] = static_cast<double>(r.data.transfers - r.data.intact);
  else
    m.absent("data_errors", "the data was not checked (a buffer is not in host memory)");
  return m;
}

}  // namespace rocehil::run
