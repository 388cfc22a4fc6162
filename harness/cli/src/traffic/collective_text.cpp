#include "traffic/collective_text.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace rocehil::cli {

std::string collective_table_header(const run::CollectiveJob& job,
                                    const std::vector<run::CollectiveRankInfo>& ranks,
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

std::string collective_table_row(const run::CollectiveCase& c) {
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

std::string collective_notes(const run::CollectiveCase& c) {
  std::string out;
  const std::string where = fmt::format("{} B, {} qps", c.job.plan.bytes, c.job.scaling.qps);
  if (c.interrupted) out += fmt::format("#   {}: interrupted, partial results\n", where);
  if (c.errors > 0)
    out += fmt::format("#   {}: {} transport errors, first: {}\n", where, c.errors, c.first_error);
  for (const auto& p : c.problems) out += fmt::format("#   {}: data: {}\n", where, p);
  // Only what the provider counted (verbs counts none of these per QP: the NIC's counters do).
  const traffic::QpCounters t = run::summed_qp_counters(c);
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

int collective_exit_code(const std::vector<run::CollectiveCase>& cases) {
  for (const auto& c : cases)
    if (c.errors > 0 || c.wrong > 0 || c.interrupted) return 1;
  return 0;
}

}  // namespace rocehil::cli
