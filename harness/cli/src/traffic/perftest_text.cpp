#include "traffic/perftest_text.hpp"

#include <fmt/format.h>

#include "rocehil/remote/agent_link.hpp"

namespace rocehil::cli {

namespace {

std::string shown_command(const std::vector<std::string>& words) {
  std::string line;
  for (const std::string& w : words) {
    if (!line.empty()) line += ' ';
    const bool plain = !w.empty() && w.find_first_not_of(
                                         "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLM"
                                         "NOPQRSTUVWXYZ0123456789_-.=/:,") == std::string::npos;
    line += plain ? w : remote::shell_quote(w);
  }
  return line;
}

std::string side_line(const char* role, const run::PerftestSide& side) {
  if (!side.results) return fmt::format("  {} ({}): not started\n", role, side.name);
  const agent::PerftestResultsEvent& r = *side.results;
  return fmt::format("  {} ({}): {}\n", role, side.name,
                     r.command.empty() ? "(no command)" : shown_command(r.command));
}

std::string optional_us(const std::optional<double>& v) {
  return v ? fmt::format("{:.2f}", *v) : std::string("-");
}

}  // namespace

std::string perftest_numbers(const perftest::Report& report) {
  if (report.bw)
    return fmt::format("BW average {:.2f} Gb/s, peak {}, MsgRate {:.6f} Mpps ({} B x {})",
                       report.bw->average_gbps,
                       report.bw->peak_gbps ? fmt::format("{:.2f}", *report.bw->peak_gbps)
                                            : std::string("not measured"),
                       report.bw->msg_rate_mpps, report.bw->bytes, report.bw->iterations);
  if (report.lat) {
    const perftest::LatRow& l = *report.lat;
    if (!l.typical_us && l.avg_us)  // a run by duration prints only these
      return fmt::format("t_avg {:.2f} us, {:.2f} tps ({} B x {})", *l.avg_us, l.tps.value_or(0),
                         l.bytes, l.iterations);
    return fmt::format(
        "t_typical {} us, t_min {}, t_avg {}, t_stdev {}, 99% {}, 99.9% {}, t_max {} ({} B x {})",
        optional_us(l.typical_us), optional_us(l.min_us), optional_us(l.avg_us),
        optional_us(l.stdev_us), optional_us(l.p99_us), optional_us(l.p999_us),
        optional_us(l.max_us), l.bytes, l.iterations);
  }
  return {};
}

std::string format_perftest_pair(const run::PerftestPairResult& result) {
  std::string out;
  if (result.interrupted) out += "interrupted: perftest was stopped by Ctrl-C\n";
  const agent::PerftestResultsEvent* client =
      result.client.results ? &*result.client.results : nullptr;
  const std::string version = client && !client->version.empty() ? client->version
                              : result.server.results && !result.server.results->version.empty()
                                  ? result.server.results->version
                                  : std::string("(version unknown)");
  out += fmt::format("perftest {}\n", version);
  out += side_line("server", result.server);
  out += side_line("client", result.client);
  if (client && client->report)
    out += fmt::format("  {}\n  read from {}\n", perftest_numbers(*client->report),
                       client->report->layout);
  if (const auto failure = run::perftest_failure(result))
    out += fmt::format("perftest failed: {}\n", failure->message);
  return out;
}

}  // namespace rocehil::cli
