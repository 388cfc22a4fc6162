#include "rocehil/harness/collective_text.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "qp_counters_json.hpp"

namespace rocehil::harness {

namespace {

using nlohmann::ordered_json;

// The peer each of a rank's QPs faces: its plan's peers, qps each, in order.
std::vector<int> qp_peers(const CollectiveCase& c, int rank) {
  const auto plan = traffic::make_plan(c.job.plan);
  std::vector<int> peers, out;
  plan->peers(rank, peers);
  for (const int p : peers)
    for (std::uint32_t q = 0; q < c.job.scaling.qps; ++q) out.push_back(p);
  return out;
}

// Every QP's counters of every rank, summed: what all of them measured.
traffic::QpCounters transport_of(const CollectiveCase& c) {
  traffic::QpCounters t;
  for (const auto& r : c.results)
    for (const auto& q : r.per_qp) t += q.counters;
  return t;
}

std::vector<double> wait_ms_per_step(const ResultsEvent& r) {
  std::vector<double> out;
  if (r.collective)
    for (const auto ns : r.collective->wait_ns) out.push_back(static_cast<double>(ns) / 1e6);
  return out;
}

}  // namespace

std::string collective_table_header(const CollectiveJob& job,
                                    const std::vector<CollectiveRankInfo>& ranks,
                                    const std::string& provider, const std::string& placement) {
  std::string hosts;
  for (std::size_t i = 0; i < ranks.size() && i < 8; ++i) {
    if (i > 0) hosts += ' ';
    hosts += ranks[i].host;
  }
  if (ranks.size() > 8) hosts += fmt::format(" ... ({} more)", ranks.size() - 8);
  std::string out = fmt::format(
      "# rocehil collective {}: {} ranks on {} ({} provider, {} placement)\n"
      "# QP scaling {}; {} iterations after {} warm-up{}\n#\n",
      to_string(job.plan.pattern), ranks.size(), hosts, provider, placement,
      to_string(job.scaling.strategy), job.iterations, job.warmup_iterations,
      job.verify ? "; every rank's data checked on one iteration first" : "");
  out += fmt::format("# {:>12} {:>4} {:>11} {:>11} {:>11} {:>6} {:>8} {:>8} {:>9} {:>6}\n", "size",
                     "qps", "time", "p50", "p99", "cv", "algbw", "busbw", "busbw", "#wrong");
  out += fmt::format("# {:>12} {:>4} {:>11} {:>11} {:>11} {:>6} {:>8} {:>8} {:>9} {:>6}\n", "(B)",
                     "", "(us)", "(us)", "(us)", "", "(GB/s)", "(GB/s)", "(Gbit/s)", "");
  return out;
}

std::string collective_table_row(const CollectiveCase& c) {
  const auto& s = c.summary;
  const std::string wrong =
      c.job.verify ? (c.verified || c.wrong > 0 ? std::to_string(c.wrong) : std::string("n/a"))
                   : std::string("-");
  return fmt::format(
      "  {:>12} {:>4} {:>11.1f} {:>11.1f} {:>11.1f} {:>6.3f} {:>8.3f} {:>8.3f} "
      "{:>9.3f} {:>6}\n",
      c.job.plan.bytes, c.job.scaling.qps, s.time_us, s.time_p50_us, s.time_p99_us, s.time_cv,
      s.algbw_gbytes_s, s.busbw_gbytes_s, s.busbw_gbps, wrong);
}

std::string collective_notes(const CollectiveCase& c) {
  std::string out;
  const std::string where = fmt::format("{} B, {} qps", c.job.plan.bytes, c.job.scaling.qps);
  if (c.interrupted) out += fmt::format("#   {}: interrupted, partial results\n", where);
  if (c.errors > 0)
    out += fmt::format("#   {}: {} transport errors, first: {}\n", where, c.errors, c.first_error);
  for (const auto& p : c.problems) out += fmt::format("#   {}: data: {}\n", where, p);
  // Only what the provider counted (verbs counts none of these per QP: the NIC's counters do).
  const traffic::QpCounters t = transport_of(c);
  using K = traffic::QpCounter;
  if (t.value(K::retransmitted_packets) + t.value(K::timeouts) + t.value(K::naks_received) +
          t.value(K::cnps_handled) + t.value(K::ce_received) >
      0)
    out += fmt::format(
        "#   {}: transport: {} packets retransmitted, {} ACK timeouts, {} NAKs, {} CE marks "
        "received, {} CNPs handled\n",
        where, t.value(K::retransmitted_packets), t.value(K::timeouts), t.value(K::naks_received),
        t.value(K::ce_received), t.value(K::cnps_handled));
  const auto& s = c.summary;
  if (s.straggler >= 0) {
    std::vector<double> waits = s.wait_ms;
    std::sort(waits.begin(), waits.end());
    out += fmt::format(
        "#   {}: straggler: rank {} ({}) waited {:.3f} ms for data while the median rank waited "
        "{:.3f} ms: the others were waiting for it\n",
        where, s.straggler, c.rank_names[static_cast<std::size_t>(s.straggler)],
        s.wait_ms[static_cast<std::size_t>(s.straggler)], waits[waits.size() / 2]);
  }
  if (c.matrix) {
    const auto& m = *c.matrix;
    out += fmt::format("#   {}: pairwise Gbit/s (row sends to column), median {:.3f}\n", where,
                       m.median_gbps);
    out += "#   " + fmt::format("{:>10}", "");
    for (int b = 0; b < m.ranks; ++b) out += fmt::format(" {:>8}", b);
    out += '\n';
    for (int a = 0; a < m.ranks; ++a) {
      out +=
          "#   " + fmt::format("{:>10}", c.rank_names[static_cast<std::size_t>(a)].substr(0, 10));
      for (int b = 0; b < m.ranks; ++b)
        out += std::isnan(m.at(a, b)) ? fmt::format(" {:>8}", "-")  // no pair, or not timed
                                      : fmt::format(" {:>8.3f}", m.at(a, b));
      out += '\n';
    }
    for (const auto& o : m.outliers)
      out += fmt::format("#   slow pair: {} - {}: {:.3f} Gbit/s\n",
                         c.rank_names[static_cast<std::size_t>(o.a)],
                         c.rank_names[static_cast<std::size_t>(o.b)], o.gbps);
    for (const int r : m.suspects)
      out += fmt::format(
          "#   common to the slow pairs: rank {} ({}): check its NIC, cable and "
          "switch port\n",
          r, c.rank_names[static_cast<std::size_t>(r)]);
  }
  return out;
}

nlohmann::json collective_json(const std::vector<CollectiveRankInfo>& ranks,
                               const std::string& provider, const std::string& placement,
                               const std::vector<CollectiveCase>& cases) {
  ordered_json j;
  j["schema_version"] = 1;
  j["provider"] = provider;
  j["placement"] = placement;
  if (!cases.empty()) {
    const CollectiveJob& job = cases.front().job;
    j["pattern"] = std::string(to_string(job.plan.pattern));
    j["strategy"] = std::string(to_string(job.scaling.strategy));
    j["warmup_iterations"] = job.warmup_iterations;
    j["iterations"] = job.iterations;
    j["verify"] = job.verify;
    j["busbw_factor"] = traffic::busbw_factor(job.plan.pattern, job.plan.ranks);
  }
  ordered_json rank_list = ordered_json::array();
  for (std::size_t r = 0; r < ranks.size(); ++r)
    rank_list.push_back({{"rank", r},
                         {"host", ranks[r].host},
                         {"nic", ranks[r].nic},
                         {"address", ranks[r].address}});
  j["ranks"] = std::move(rank_list);
  ordered_json case_list = ordered_json::array();
  for (const auto& c : cases) {
    const auto& s = c.summary;
    ordered_json e;
    e["bytes"] = c.job.plan.bytes;
    e["qps"] = c.job.scaling.qps;
    e["iterations"] = s.iterations;
    e["time_us"] = s.time_us;
    e["time_p50_us"] = s.time_p50_us;
    e["time_p99_us"] = s.time_p99_us;
    e["time_max_us"] = s.time_max_us;
    e["time_cv"] = s.time_cv;
    e["iteration_us"] = s.iteration_us;
    e["algbw_gbytes_s"] = s.algbw_gbytes_s;
    e["busbw_gbytes_s"] = s.busbw_gbytes_s;
    e["busbw_gbps"] = s.busbw_gbps;
    e["verified"] = c.verified;
    e["wrong"] = c.wrong;
    e["problems"] = c.problems;
    e["errors"] = c.errors;
    e["first_error"] = c.first_error;
    e["interrupted"] = c.interrupted;
    e["straggler"] = s.straggler;
    e["wait_ms"] = s.wait_ms;
    ordered_json transport = ordered_json::object();
    const traffic::QpCounters t = transport_of(c);
    for (const auto k : {traffic::QpCounter::retransmitted_packets, traffic::QpCounter::timeouts,
                         traffic::QpCounter::naks_received, traffic::QpCounter::ce_received,
                         traffic::QpCounter::cnps_handled})
      if (t.has(k)) transport[std::string(traffic::to_string(k))] = t.value(k);
    e["transport"] = std::move(transport);
    ordered_json per_rank = ordered_json::array();
    for (std::size_t r = 0; r < c.results.size(); ++r) {
      const ResultsEvent& res = c.results[r];
      const std::vector<int> peers = qp_peers(c, static_cast<int>(r));
      ordered_json qps = ordered_json::array();
      for (std::size_t q = 0; q < res.per_qp.size(); ++q) {
        const QpResult& qp = res.per_qp[q];
        qps.push_back({{"qpn", qp.qpn},
                       {"peer", q < peers.size() ? peers[q] : -1},
                       {"udp_sport", qp.udp_sport},
                       {"messages", qp.messages},
                       {"bytes", qp.bytes},
                       {"gbps", qp.gbps},
                       {"counters", qp_counters_json(qp.counters)}});
      }
      per_rank.push_back({{"rank", r},
                          {"bytes_sent", res.collective ? res.collective->bytes_sent : 0},
                          {"bytes_received", res.collective ? res.collective->bytes_received : 0},
                          {"wait_ms_per_step", wait_ms_per_step(res)},
                          {"errors", res.errors},
                          {"first_error", res.first_error},
                          {"per_qp", std::move(qps)}});
    }
    e["per_rank"] = std::move(per_rank);
    if (c.matrix) {
      const auto& m = *c.matrix;
      ordered_json rows = ordered_json::array();
      for (int a = 0; a < m.ranks; ++a) {
        ordered_json row = ordered_json::array();
        for (int b = 0; b < m.ranks; ++b) row.push_back(m.at(a, b));
        rows.push_back(std::move(row));
      }
      ordered_json outliers = ordered_json::array();
      for (const auto& o : m.outliers)
        outliers.push_back({{"a", o.a}, {"b", o.b}, {"gbps", o.gbps}});
      e["pairwise"] = {{"gbps", std::move(rows)},
                       {"median_gbps", m.median_gbps},
                       {"outliers", std::move(outliers)},
                       {"suspects", m.suspects}};
    }
    case_list.push_back(std::move(e));
  }
  j["cases"] = std::move(case_list);
  return j;
}

int collective_exit_code(const std::vector<CollectiveCase>& cases) {
  for (const auto& c : cases)
    if (c.errors > 0 || c.wrong > 0 || c.interrupted) return 1;
  return 0;
}

}  // namespace rocehil::harness
