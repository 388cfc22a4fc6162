#include "traffic/traffic_text.hpp"

#include <fmt/format.h>

#include <cmath>

#include "rocehil/common/units.hpp"
#include "shared/text_table.hpp"

namespace rocehil::cli {

std::string describe_test(const run::PointToPointConfig& config, const std::string& server_name) {
  const agent::SetupRequest& c = config.client;
  std::string what =
      c.workload == agent::Workload::lat
          ? fmt::format("lat (send ping-pong): {} B messages, {} iterations after {} warm-up",
                        c.message_bytes, config.start.iterations, config.start.warmup_iterations)
          : fmt::format("bw {}{}: {} QP{} x {} B messages, tx depth {}, {}", to_string(c.opcode),
                        c.bidirectional ? " bidirectional" : "", c.qps, c.qps == 1 ? "" : "s",
                        c.message_bytes, c.tx_depth,
                        config.start.iterations != 0
                            ? fmt::format("{} messages after {} s warm-up", config.start.iterations,
                                          config.start.warmup_seconds)
                            : fmt::format("{} s after {} s warm-up", config.start.seconds,
                                          config.start.warmup_seconds));
  static constexpr const char* ecn[] = {"not ECN-capable", "ECT(1)", "ECT(0)", "CE"};
  return fmt::format(
      "{}\n  mtu {}, traffic class {} (DSCP {}, {}), provider {}\n"
      "  client {} (here)  ->  server {} on {}\n",
      what, c.mtu, c.traffic_class, c.traffic_class >> 2, ecn[c.traffic_class & 3], c.provider,
      c.address, config.server.address, server_name);
}

std::string format_stats_line(const agent::StatsEvent& stats) {
  return fmt::format("  {:6.1f} s  {:9.3f} Gbps  {:>12} messages\n", stats.t_s, stats.gbps,
                     stats.messages);
}

std::string format_point_to_point(const run::PointToPointConfig& config,
                                  const run::PointToPointResult& result) {
  const agent::ResultsEvent& c = result.client.results;
  const agent::ResultsEvent& s = result.server.results;
  std::string out;
  if (result.interrupted) out += "interrupted: the results cover the run until Ctrl-C\n";
  if (c.latency) {
    const agent::LatencySummary& l = *c.latency;
    out += fmt::format(
        "one-way latency over {} samples (half the round trip):\n"
        "  min {:.2f} us  p50 {:.2f} us  p99 {:.2f} us  p99.9 {:.2f} us  max {:.2f} us  "
        "mean {:.2f} us\n",
        l.samples, l.min_us, l.p50_us, l.p99_us, l.p999_us, l.max_us, l.mean_us);
  } else {
    TextTable table({{"QP"},
                     {"sport"},
                     {"messages"},
                     {"Gbps"},
                     {"retransmits"},
                     {"timeouts"},
                     {"NAKs in"},
                     {"CNPs handled"},
                     {"rate cuts"},
                     {"DCQCN rate"}});
    using K = traffic::QpCounter;
    for (const agent::QpResult& q : c.per_qp) {
      const traffic::QpCounters& k = q.counters;
      // "-": the provider does not count it per QP (verbs: the NIC counts per port).
      const auto count = [&](K counter) {
        return k.has(counter) ? std::to_string(k.value(counter)) : std::string("-");
      };
      table.add_row({fmt::format("{:#08x}", q.qpn), std::to_string(q.udp_sport),
                     std::to_string(q.messages), fmt::format("{:.3f}", q.gbps),
                     count(K::retransmitted_packets), count(K::timeouts), count(K::naks_received),
                     count(K::cnps_handled), count(K::rate_cuts),
                     !k.has(K::rate_gbps) ? "-"
                     : k.rate_gbps > 0    ? fmt::format("{:.3f} Gbps", k.rate_gbps)
                                          : "line rate"});
    }
    out += "client, per QP:\n" + table.render();
    out += fmt::format("  total {:.3f} Gbps, {}, {} in {:.2f} s\n", c.gbps,
                       format_si(std::round(c.messages_per_s), "messages/s"),
                       format_bytes(static_cast<double>(c.bytes)), c.seconds);
    if (config.client.bidirectional)
      out += fmt::format("  server -> client {:.3f} Gbps, {}\n", s.gbps,
                         format_si(std::round(s.messages_per_s), "messages/s"));
  }
  traffic::QpCounters served;
  for (const agent::QpResult& q : s.per_qp) served += q.counters;
  using K = traffic::QpCounter;
  if (served.has(K::ce_received) && served.has(K::cnps_sent) && served.has(K::naks_sent) &&
      served.has(K::out_of_sequence))
    out += fmt::format(
        "server: {} packets with ECN CE received, {} CNPs sent, {} NAKs sent, {} out of "
        "sequence\n",
        served.ce_received, served.cnps_sent, served.naks_sent, served.out_of_sequence);
  else
    out +=
        "server: CE marks, CNPs, NAKs and out-of-sequence packets are not counted per QP by "
        "this provider (the NIC's port counters have them)\n";
  for (const auto* side : {&result.client, &result.server})
    if (side->results.errors != 0)
      out += fmt::format("{}: {} error completions, the first: {}\n", side->name,
                         side->results.errors, side->results.first_error);
  const run::DataCheck& d = result.data;
  if (!d.checked)
    out += "data: not checked (a buffer is not in host memory)\n";
  else if (d.problems.empty())
    out +=
        fmt::format("data: intact, {} of {} transfers (CRC-32 of what was sent = what arrived)\n",
                    d.intact, d.transfers);
  else
    for (const std::string& p : d.problems) out += fmt::format("data: CORRUPT: {}\n", p);
  return out;
}

int point_to_point_exit_code(const run::PointToPointResult& result) {
  const bool clean = result.client.results.errors == 0 && result.server.results.errors == 0 &&
                     result.data.problems.empty();
  return clean ? 0 : 1;
}

}  // namespace rocehil::cli
