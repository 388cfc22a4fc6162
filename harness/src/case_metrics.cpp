#include "rocehil/harness/case_metrics.hpp"

#include <algorithm>
#include <set>

namespace rocehil::harness {

namespace {

// retransmits, timeouts, naks and cnps: every QP's counters of every report, summed.
void add_qp_counters(suites::Values& v, const std::vector<const ResultsEvent*>& reports) {
  double retransmits = 0, timeouts = 0, naks = 0, cnps = 0;
  for (const ResultsEvent* r : reports)
    for (const auto& q : r->per_qp) {
      retransmits += static_cast<double>(q.counters.retransmitted_packets);
      timeouts += static_cast<double>(q.counters.timeouts);
      naks += static_cast<double>(q.counters.naks_received);
      cnps += static_cast<double>(q.counters.cnps_handled);
    }
  v["retransmits"] = retransmits;
  v["timeouts"] = timeouts;
  v["naks"] = naks;
  v["cnps"] = cnps;
}

}  // namespace

suites::Values collective_metrics(const CollectiveCase& c) {
  const auto& s = c.summary;
  suites::Values v{{"busbw_gbps", s.busbw_gbps}, {"algbw_gbps", s.algbw_gbytes_s * 8},
                   {"time_us", s.time_us},       {"time_p99_us", s.time_p99_us},
                   {"time_cv", s.time_cv},       {"errors", static_cast<double>(c.errors)}};
  std::vector<const ResultsEvent*> reports;
  for (const auto& r : c.results) reports.push_back(&r);
  add_qp_counters(v, reports);
  if (c.verified || c.wrong > 0) v["data_errors"] = c.wrong;
  return v;
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

suites::Values point_to_point_metrics(const PointToPointResult& r) {
  const ResultsEvent& client = r.client.results;
  const ResultsEvent& server = r.server.results;
  suites::Values v;
  add_qp_counters(v, {&client, &server});
  v["errors"] = static_cast<double>(client.errors + server.errors);
  if (client.workload == Workload::lat) {
    if (client.latency && client.latency->samples > 0) {
      v["lat_p50_us"] = client.latency->p50_us;
      v["lat_p99_us"] = client.latency->p99_us;
      v["lat_max_us"] = client.latency->max_us;
    }
    return v;
  }
  const double gbps = server.bytes > 0 ? server.gbps : client.gbps;
  v["busbw_gbps"] = gbps;
  v["algbw_gbps"] = gbps;
  if (r.data.checked) v["data_errors"] = static_cast<double>(r.data.transfers - r.data.intact);
  return v;
}

}  // namespace rocehil::harness
