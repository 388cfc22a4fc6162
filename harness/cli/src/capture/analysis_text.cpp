#include "capture/analysis_text.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <numeric>

#include "rocehil/common/units.hpp"
#include "shared/text_table.hpp"

namespace rocehil::cli {

using capture::Analysis;
using capture::MirrorSession;
using Align = TextTable::Align;

namespace {

std::string percent(std::uint64_t part, std::uint64_t whole) {
  if (whole == 0) return "-";
  return fmt::format("{:.2f}%", 100.0 * static_cast<double>(part) / static_cast<double>(whole));
}

std::string qp_label(std::uint32_t qp) {
  return fmt::format("0x{:06x} ({})", qp, qp);
}

std::string summary(const Analysis& a, const CaptureInfo& info) {
  const double span_ns = static_cast<double>(a.last_ns - a.first_ns);
  std::string s =
      fmt::format("{} ({}): {} frames, {} on the wire, {} from the first frame to the last\n",
                  info.path, info.format, group_digits(a.frames),
                  format_bytes(static_cast<double>(a.bytes)), format_duration_ns(span_ns));
  s += fmt::format("  IPv4 {}, IPv6 {}, VLAN-tagged {}", group_digits(a.ipv4), group_digits(a.ipv6),
                   group_digits(a.vlan_tagged));
  if (a.non_ethernet)
    s += fmt::format(", not Ethernet (not decoded) {}", group_digits(a.non_ethernet));
  s += "\n";
  for (const auto& p : info.problems) s += fmt::format("  warning: {}\n", p);
  return s;
}

std::string roce_section(const Analysis& a) {
  const Analysis::Roce& r = a.roce;
  std::string s = fmt::format(
      "\nRoCEv2 (UDP 4791): {} packets, {}, ECN CE {} ({}), malformed {}, truncated {}\n",
      group_digits(r.packets), format_bytes(static_cast<double>(r.bytes)), group_digits(r.ecn_ce),
      percent(r.ecn_ce, r.packets), group_digits(r.malformed), group_digits(r.truncated));
  s += fmt::format("  ACKs {}, NAKs {}, RNR NAKs {}\n", group_digits(r.acks), group_digits(r.naks),
                   group_digits(r.rnr_naks));
  TextTable t({{"opcode", Align::left}, {"packets"}, {"share"}});
  for (std::size_t op = 0; op < r.by_opcode.size(); ++op) {
    if (!r.by_opcode[op]) continue;
    const char* name = capture::opcode_name(static_cast<std::uint8_t>(op));
    t.add_row({fmt::format("0x{:02x} {}", op, name ? name : "(unknown)"),
               group_digits(r.by_opcode[op]), percent(r.by_opcode[op], r.packets)});
  }
  if (!t.empty()) s += t.render();
  return s;
}

// What each traffic class carried, as a switch queues it (by DSCP): where the CE marks and the
// CNPs and ACKs of a lossless class went.
std::string class_section(const Analysis& a) {
  TextTable t(
      {{"DSCP"}, {"packets"}, {"bytes"}, {"ECN CE"}, {"CNPs"}, {"ACKs"}, {"NAKs"}, {"RNR NAKs"}});
  for (std::size_t d = 0; d < a.roce.by_dscp.size(); ++d) {
    const capture::DscpCounts& c = a.roce.by_dscp[d];
    if (!c.packets) continue;
    t.add_row({std::to_string(d), group_digits(c.packets),
               format_bytes(static_cast<double>(c.bytes)), group_digits(c.ecn_ce),
               group_digits(c.cnps), group_digits(c.acks), group_digits(c.naks),
               group_digits(c.rnr_naks)});
  }
  return t.empty() ? std::string() : "\nRoCEv2 by traffic class (DSCP)\n" + t.render();
}

std::string cnp_section(const Analysis& a, std::size_t top) {
  std::string s = fmt::format("\nCNPs: {} to {} QPs\n", group_digits(a.cnp.count),
                              group_digits(a.cnp.by_dest_qp.size()));
  auto by_count = a.cnp.by_dest_qp;
  std::stable_sort(by_count.begin(), by_count.end(),
                   [](const auto& x, const auto& y) { return x.second > y.second; });
  TextTable t({{"dest QP", Align::left}, {"CNPs"}, {"share"}});
  for (std::size_t i = 0; i < by_count.size() && i < top; ++i)
    t.add_row({qp_label(by_count[i].first), group_digits(by_count[i].second),
               percent(by_count[i].second, a.cnp.count)});
  if (!t.empty()) s += t.render();
  if (by_count.size() > top)
    s += fmt::format("  ... {} more QPs (--top to list more)\n", by_count.size() - top);
  return s;
}

// A pause fraction as a percentage; "-" when there was no window to take it over.
std::string pause_percent(double fraction, const Analysis& a) {
  if (a.window_end_ns <= a.window_start_ns) return "-";
  return fmt::format("{:.2f}%", 100.0 * fraction);
}

std::string pfc_section(const Analysis& a, const CaptureInfo& info) {
  std::string s = fmt::format(
      "\nPFC (802.1Qbb): {} frames, malformed MAC control {}; pause time at {}{}\n",
      group_digits(a.pfc.frames), group_digits(a.pfc.malformed),
      a.options.interface_link_gbps.empty() ? fmt::format("{} Gb/s", a.options.link_gbps)
                                            : std::string("each interface's speed"),
      info.link_speed_source.empty() ? std::string() : " (" + info.link_speed_source + ")");
  // "requested" adds up every XOFF's quanta; "paused" is the time a priority was held, refreshes
  // that overlap counted once, so a storm shows as requested >> paused.
  TextTable t({{"priority"},
               {"frames"},
               {"XOFF"},
               {"XON"},
               {"quanta"},
               {"requested"},
               {"paused"},
               {"longest"},
               {"% paused"},
               {"storms"}});
  for (std::size_t p = 0; p < a.pfc.priorities.size(); ++p) {
    const auto& x = a.pfc.priorities[p];
    t.add_row({std::to_string(p), group_digits(x.frames), group_digits(x.xoff), group_digits(x.xon),
               group_digits(x.quanta), format_duration_ns(x.pause_ns),
               format_duration_ns(x.paused_ns), format_duration_ns(x.longest_pause_ns),
               pause_percent(x.pause_fraction, a), group_digits(x.storms)});
  }
  s += t.render();
  const auto& pause = a.pause_8023x;
  s += fmt::format(
      "802.3x PAUSE: {} frames ({} XOFF), {} quanta, {} requested; paused {} ({}), longest {}, "
      "{} storms\n",
      group_digits(pause.frames), group_digits(pause.xoff), group_digits(pause.quanta),
      format_duration_ns(pause.pause_ns), format_duration_ns(pause.paused_ns),
      pause_percent(pause.pause_fraction, a), format_duration_ns(pause.longest_pause_ns),
      group_digits(pause.storms));
  if (a.pfc.direction_known) {
    const auto& spine = a.pfc.from_spine;
    s += fmt::format(
        "From spine (toward the leaf): {} PFC/PAUSE frames ({} with XOFF), paused {}, {} storms\n",
        group_digits(spine.frames), group_digits(spine.xoff), format_duration_ns(spine.paused_ns),
        group_digits(spine.storms));
  }
  // The window is the capture's own (start to stop) where it was told one, which is longer than
  // the first-to-last frame span above: say which it is.
  const bool listened = a.window_end_ns - a.window_start_ns != a.last_ns - a.first_ns;
  s += fmt::format("Observed for {} ({}; pause % is paused time over this; senders add up)\n",
                   format_duration_ns(static_cast<double>(a.window_end_ns - a.window_start_ns)),
                   listened ? "the capture's start to its stop" : "the first frame to the last");
  return s;
}

std::string storms_section(const Analysis& a) {
  if (a.pfc.storms.empty()) return {};
  std::string s = fmt::format(
      "\nPause storms (continuous pauses longer than {} ms; start is time into the capture): {}\n",
      a.options.storm_ms, group_digits(a.pfc.storms.size()));
  std::vector<TextTable::Column> columns = {{"priority", Align::left},
                                            {"source MAC", Align::left},
                                            {"start"},
                                            {"lasts"},
                                            {"ongoing", Align::left}};
  if (a.pfc.direction_known) columns.push_back({"from spine", Align::left});
  TextTable t(std::move(columns));
  for (const capture::PfcStorm& storm : a.pfc.storms) {
    std::vector<std::string> row = {
        storm.priority < 8 ? std::to_string(storm.priority) : std::string("802.3x"),
        capture::to_string(storm.source_mac),
        format_duration_ns(static_cast<double>(storm.start_ns - a.window_start_ns)),
        format_duration_ns(storm.duration_ns), storm.ongoing ? "yes, at the end" : "no"};
    if (a.pfc.direction_known) row.push_back(storm.from_spine ? "yes" : "no");
    t.add_row(std::move(row));
  }
  s += t.render();
  return s;
}

std::string flows_section(const Analysis& a, std::size_t top) {
  std::string s = fmt::format("\nFlows (src, dst, dest QP): {}; top {} by bytes\n",
                              group_digits(a.flows.size()), std::min(top, a.flows.size()));
  TextTable t({{"src", Align::left},
               {"dst", Align::left},
               {"dest QP", Align::left},
               {"packets"},
               {"bytes"},
               {"CE"},
               {"PSN gaps"},
               {"retrans"},
               {"NAKs"},
               {"duration"}});
  for (std::size_t i = 0; i < a.flows.size() && i < top; ++i) {
    const auto& f = a.flows[i];
    t.add_row({f.key.src.to_string(), f.key.dst.to_string(), qp_label(f.key.dest_qp),
               group_digits(f.stats.packets), format_bytes(static_cast<double>(f.stats.bytes)),
               group_digits(f.stats.ecn_ce), group_digits(f.stats.psn_gaps),
               group_digits(f.stats.retransmits), group_digits(f.stats.naks),
               format_duration_ns(static_cast<double>(f.stats.last_ns - f.stats.first_ns))});
  }
  if (!t.empty()) s += t.render();
  const auto sum = [&](auto member) {
    return std::accumulate(
        a.flows.begin(), a.flows.end(), std::uint64_t{0},
        [&](std::uint64_t acc, const capture::Flow& f) { return acc + f.stats.*member; });
  };
  s += fmt::format("  all flows: PSN gaps {}, retransmits {}, NAKs {}\n",
                   group_digits(sum(&capture::FlowStats::psn_gaps)),
                   group_digits(sum(&capture::FlowStats::retransmits)),
                   group_digits(sum(&capture::FlowStats::naks)));
  return s;
}

std::string timeline_section(const Analysis& a) {
  const auto& tl = a.timeline;
  if (tl.bins.empty()) return {};
  std::size_t busiest = 0, most_cnp = 0, most_xoff = 0;
  for (std::size_t i = 0; i < tl.bins.size(); ++i) {
    if (tl.bins[i].roce_bytes > tl.bins[busiest].roce_bytes) busiest = i;
    if (tl.bins[i].cnp > tl.bins[most_cnp].cnp) most_cnp = i;
    if (tl.bins[i].pfc_xoff > tl.bins[most_xoff].pfc_xoff) most_xoff = i;
  }
  const double bin_s = tl.bin_ms / 1000.0;
  std::string s =
      fmt::format("\nTimeline: {} bins of {} ms\n", group_digits(tl.bins.size()), tl.bin_ms);
  s += fmt::format(
      "  busiest bin at {} ms: {}/s of RoCE ({} Gb/s)\n", busiest * tl.bin_ms,
      format_bytes(static_cast<double>(tl.bins[busiest].roce_bytes) / bin_s),
      fmt::format("{:.2f}", static_cast<double>(tl.bins[busiest].roce_bytes) * 8 / bin_s / 1e9));
  if (tl.bins[most_cnp].cnp)
    s += fmt::format("  most CNPs at {} ms: {}\n", most_cnp * tl.bin_ms,
                     group_digits(tl.bins[most_cnp].cnp));
  if (tl.bins[most_xoff].pfc_xoff)
    s += fmt::format("  most PFC XOFF frames at {} ms: {}\n", most_xoff * tl.bin_ms,
                     group_digits(tl.bins[most_xoff].pfc_xoff));
  if (tl.frames_outside)
    s += fmt::format("  {} frames stamped beyond the timeline's end were left out of it\n",
                     group_digits(tl.frames_outside));
  return s;
}

}  // namespace

// Remote mirrors: one line per session, with what the way from the switch lost.
std::string mirror_section(const Analysis& a) {
  const Analysis::Mirrors& m = a.mirror;
  if (m.frames == 0 && m.malformed == 0) return {};
  std::string s = fmt::format("\nRemote mirrors: {} frames opened, {} malformed",
                              group_digits(m.frames), group_digits(m.malformed));
  if (m.lost() > 0)
    s +=
        fmt::format(", {} lost on the way (coverage {:.4f})", group_digits(m.lost()), m.coverage());
  s += "\n";
  TextTable t({{"session", Align::left},
               {"from", Align::left},
               {"frames"},
               {"lost"},
               {"truncated"},
               {"timed by", Align::left}});
  for (const MirrorSession& x : m.sessions) {
    const std::string id = x.has_id ? fmt::format("{} {}", capture::to_string(x.kind), x.id)
                                    : std::string(capture::to_string(x.kind));
    const std::string lost = x.sequenced ? group_digits(x.lost()) : "(no sequence numbers)";
    std::string timed = "collector";
    if (x.switch_timed > 0)
      timed = fmt::format("switch, {}",
                          format_duration_ns(static_cast<double>(std::max(
                              std::abs(x.min_clock_offset_ns), std::abs(x.max_clock_offset_ns))))) +
              " apart";
    if (x.clock_too_far > 0)
      timed += fmt::format(" ({} too far: collector)", group_digits(x.clock_too_far));
    t.add_row(
        {id, x.source.to_string(), group_digits(x.frames), lost, group_digits(x.truncated), timed});
  }
  if (!t.empty()) s += t.render();
  return s;
}

std::string render_analysis_text(const Analysis& a, const CaptureInfo& info, std::size_t top) {
  return summary(a, info) + mirror_section(a) + roce_section(a) + class_section(a) +
         cnp_section(a, top) + pfc_section(a, info) + storms_section(a) + flows_section(a, top) +
         timeline_section(a);
}

}  // namespace rocehil::cli
