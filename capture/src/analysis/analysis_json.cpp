#include "rocehil/capture/analysis_json.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cstring>
#include <future>
#include <vector>

#include "analysis/async_or_deferred.hpp"

namespace rocehil::capture {

using nlohmann::json;

namespace {

// fmt's memory buffer (it appends far faster than a std::string through an iterator), handed to
// the sink whenever it passes a threshold.
class Output {
 public:
  explicit Output(const std::function<void(std::string_view)>& sink) : sink_(sink) {}
  ~Output() { flush(); }
  Output(const Output&) = delete;
  Output& operator=(const Output&) = delete;

  template <class... Args>
  void print(fmt::format_string<Args...> format, Args&&... args) {
    fmt::format_to(fmt::appender(buffer_), format, std::forward<Args>(args)...);
    if (buffer_.size() >= flush_at) flush();
  }
  // The per-flow loop writes into the buffer through a cursor: at 100k+ flows even a plain
  // append per field costs more than the digits it writes.
  class Line {
   public:
    Line(fmt::memory_buffer& buffer, std::size_t max_size)
        : buffer_(buffer), start_(buffer.size()) {
      buffer_.resize(start_ + max_size);
      p_ = buffer_.data() + start_;
    }
    ~Line() { buffer_.resize(static_cast<std::size_t>(p_ - buffer_.data())); }
    Line(const Line&) = delete;
    Line& operator=(const Line&) = delete;

    template <std::size_t N>
    Line& text(const char (&literal)[N]) {
      std::memcpy(p_, literal, N - 1);
      p_ += N - 1;
      return *this;
    }
    Line& number(std::uint64_t v) {
      p_ = std::to_chars(p_, p_ + 20, v).ptr;
      return *this;
    }
    Line& address(const IpAddress& ip) {
      p_ = ip.format_to(p_);
      return *this;
    }

   private:
    fmt::memory_buffer& buffer_;
    std::size_t start_;
    char* p_;
  };
  Line line(std::size_t max_size) { return Line(buffer_, max_size); }
  void end_item() {
    if (buffer_.size() >= flush_at) flush();
  }

  void flush() {
    if (buffer_.size() == 0) return;
    sink_(std::string_view(buffer_.data(), buffer_.size()));
    buffer_.clear();
  }
  // Text written elsewhere, after everything before it.
  void write_through(std::string_view text) {
    flush();
    if (!text.empty()) sink_(text);
  }

 private:
  static constexpr std::size_t flush_at = 64 * 1024;
  const std::function<void(std::string_view)>& sink_;
  fmt::memory_buffer buffer_;
};

json roce_json(const Analysis::Roce& r) {
  json by_opcode = json::object();
  for (std::size_t op = 0; op < r.by_opcode.size(); ++op) {
    if (r.by_opcode[op] == 0) continue;
    const char* name = opcode_name(static_cast<std::uint8_t>(op));
    by_opcode[name ? std::string(name) : fmt::format("0x{:02x}", op)] = r.by_opcode[op];
  }
  return {{"packets", r.packets}, {"malformed", r.malformed}, {"truncated", r.truncated},
          {"ecn_ce", r.ecn_ce},   {"bytes", r.bytes},         {"acks", r.acks},
          {"naks", r.naks},       {"rnr_naks", r.rnr_naks},   {"by_opcode", by_opcode}};
}

// Only the classes that carried RoCE packets, keyed by the DSCP value ("26").
json by_dscp_json(const Analysis::Roce& r) {
  json out = json::object();
  for (std::size_t dscp = 0; dscp < r.by_dscp.size(); ++dscp) {
    const DscpCounts& c = r.by_dscp[dscp];
    if (c.packets == 0) continue;
    out[std::to_string(dscp)] = {{"packets", c.packets},  {"bytes", c.bytes}, {"ecn_ce", c.ecn_ce},
                                 {"cnps", c.cnps},        {"acks", c.acks},   {"naks", c.naks},
                                 {"rnr_naks", c.rnr_naks}};
  }
  return out;
}

const char* granularity_name(TimestampGranularity g) {
  switch (g) {
    case TimestampGranularity::us100: return "100us";
    case TimestampGranularity::ns100: return "100ns";
    case TimestampGranularity::ieee1588: return "ieee1588";
    case TimestampGranularity::platform: break;
  }
  return "platform";
}

template <class Key>
json counted_list(const char* name, const std::vector<std::pair<Key, std::uint64_t>>& list) {
  json out = json::array();
  for (const auto& [key, n] : list) out.push_back({{name, key}, {"frames", n}});
  return out;
}

// null members, not zeros, where the session gave nothing to measure by: no sequence numbers
// (losses unknown), no switch timestamps (clock offset unknown).
json mirror_json(const Analysis::Mirrors& m) {
  json sessions = json::array();
  for (const MirrorSession& s : m.sessions) {
    json x = {{"kind", to_string(s.kind)},
              {"source", s.source.to_string()},
              {"collector", s.collector.to_string()},
              {"id", s.has_id ? json(s.id) : json(nullptr)},
              {"frames", s.frames},
              {"bytes", s.bytes},
              {"truncated", s.truncated},
              {"sequenced", s.sequenced},
              {"lost", s.sequenced ? json(s.lost()) : json(nullptr)},
              {"late", s.sequenced ? json(s.late) : json(nullptr)},
              {"coverage", s.sequenced ? json(s.coverage()) : json(nullptr)},
              {"first_sequence", s.sequenced ? json(s.first_sequence) : json(nullptr)},
              {"last_sequence", s.sequenced ? json(s.last_sequence) : json(nullptr)},
              {"switch_timed", s.switch_timed},
              {"clock_too_far", s.clock_too_far},
              {"timestamp_granularity",
               s.switch_timed ? json(granularity_name(s.granularity)) : json(nullptr)},
              {"clock_offset_ns", s.switch_timed ? json({{"min", s.min_clock_offset_ns},
                                                         {"max", s.max_clock_offset_ns}})
                                                 : json(nullptr)},
              {"ports", counted_list("index", s.ports)},
              {"vlans", counted_list("vlan", s.vlans)}};
    sessions.push_back(std::move(x));
  }
  // Losses are known only from sequence numbers: with none, null rather than a 0 never measured.
  bool sequenced = false;
  for (const MirrorSession& s : m.sessions) sequenced = sequenced || s.sequenced > 0;
  return {{"frames", m.frames},
          {"malformed", m.malformed},
          {"mirrored_bytes", m.mirrored_bytes},
          {"lost", sequenced ? json(m.lost()) : json(nullptr)},
          {"coverage", sequenced ? json(m.coverage()) : json(nullptr)},
          {"sessions", sessions}};
}

json pfc_json(const Analysis::Pfc& pfc) {
  json priorities = json::array();
  for (std::size_t p = 0; p < pfc.priorities.size(); ++p) {
    const PfcPriority& x = pfc.priorities[p];
    priorities.push_back({{"priority", p},
                          {"frames", x.frames},
                          {"xoff", x.xoff},
                          {"xon", x.xon},
                          {"quanta", x.quanta},
                          {"pause_ns", x.pause_ns},
                          {"paused_ns", x.paused_ns},
                          {"longest_pause_ns", x.longest_pause_ns},
                          {"pause_fraction", x.pause_fraction},
                          {"storms", x.storms}});
  }
  json storms = json::array();
  for (const PfcStorm& s : pfc.storms)
    storms.push_back({{"priority", s.priority},
                      {"source_mac", to_string(s.source_mac)},
                      {"start_ns", s.start_ns},
                      {"end_ns", s.end_ns},
                      {"duration_ns", s.duration_ns},
                      {"ongoing", s.ongoing},
                      {"from_spine", s.from_spine}});
  // null, not zeros, when nothing said which frames come from a spine: zeros would claim none did.
  json from_spine = nullptr;
  if (pfc.direction_known)
    from_spine = {{"frames", pfc.from_spine.frames},
                  {"xoff", pfc.from_spine.xoff},
                  {"paused_ns", pfc.from_spine.paused_ns},
                  {"storms", pfc.from_spine.storms}};
  return {{"frames", pfc.frames},
          {"malformed", pfc.malformed},
          {"priorities", priorities},
          {"storms", storms},
          {"direction_known", pfc.direction_known},
          {"from_spine", from_spine}};
}

json options_json(const AnalyzerOptions& o) {
  json spine_macs = json::array();
  for (const MacAddress& mac : o.spine_macs) spine_macs.push_back(to_string(mac));
  return {{"link_gbps", o.link_gbps},
          {"interface_link_gbps", o.interface_link_gbps},
          {"bin_ms", o.bin_ms},
          {"storm_ms", o.storm_ms},
          {"direction", to_string(o.direction)},
          {"spine_macs", spine_macs},
          {"switch_timestamps", o.switch_timestamps},
          {"mirror_sequences", o.mirror_sequences}};
}

// Everything but the flows and the timeline bins: small, so a DOM is fine.
json head_json(const Analysis& a) {
  json by_qp = json::object();
  for (const auto& [qp, n] : a.cnp.by_dest_qp) by_qp[std::to_string(qp)] = n;
  return {{"schema_version", analysis_schema_version},
          {"frames", a.frames},
          {"bytes", a.bytes},
          {"non_ethernet", a.non_ethernet},
          {"vlan_tagged", a.vlan_tagged},
          {"ipv4", a.ipv4},
          {"ipv6", a.ipv6},
          {"first_ns", a.first_ns},
          {"last_ns", a.last_ns},
          {"link_gbps", a.options.link_gbps},
          {"roce", roce_json(a.roce)},
          {"cnp", {{"count", a.cnp.count}, {"by_dest_qp", by_qp}}},
          {"by_dscp", by_dscp_json(a.roce)},
          {"pfc", pfc_json(a.pfc)},
          {"mirror", mirror_json(a.mirror)},
          {"pause_8023x",
           {{"frames", a.pause_8023x.frames},
            {"xoff", a.pause_8023x.xoff},
            {"quanta", a.pause_8023x.quanta},
            {"pause_ns", a.pause_8023x.pause_ns},
            {"paused_ns", a.pause_8023x.paused_ns},
            {"longest_pause_ns", a.pause_8023x.longest_pause_ns},
            {"pause_fraction", a.pause_8023x.pause_fraction},
            {"storms", a.pause_8023x.storms}}},
          {"window", {{"start_ns", a.window_start_ns}, {"end_ns", a.window_end_ns}}},
          {"options", options_json(a.options)},
          {"flow_count", a.flows.size()}};
}

// Addresses are digits, dots, hex and colons: nothing to escape. The literals, two addresses and
// twelve numbers of up to 20 digits fit in max_flow_line.
constexpr std::size_t max_flow_line = 200 + 2 * IpAddress::max_text_size + 12 * 20;

// Flow `i`'s line, in `line`: every flow but the first opens with the comma after the one before.
void flow_line(Output::Line& line, const Flow& f, std::size_t i) {
  const FlowStats& s = f.stats;
  if (i != 0) line.text(",");
  line.text("\n  {")
      .text("\"src\": \"")
      .address(f.key.src)
      .text("\", \"dst\": \"")
      .address(f.key.dst)
      .text("\", \"dest_qp\": ")
      .number(f.key.dest_qp)
      .text(", \"packets\": ")
      .number(s.packets)
      .text(", \"bytes\": ")
      .number(s.bytes)
      .text(", \"ecn_ce\": ")
      .number(s.ecn_ce)
      .text(", \"psn_gaps\": ")
      .number(s.psn_gaps)
      .text(", \"retransmits\": ")
      .number(s.retransmits)
      .text(", \"naks\": ")
      .number(s.naks)
      .text(", \"udp_sport\": ")
      .number(s.udp_sport)
      .text(", \"first_ns\": ")
      .number(s.first_ns)
      .text(", \"last_ns\": ")
      .number(s.last_ns)
      .text("}");
}

void format_flows(fmt::memory_buffer& buffer, const Analysis& a, std::size_t begin,
                  std::size_t end) {
  for (std::size_t i = begin; i < end; ++i) {
    Output::Line line(buffer, max_flow_line);
    flow_line(line, a.flows[i], i);
  }
}

// Flows in blocks of this many per thread: a round of blocks is held in memory before it is
// written out in order (~1 MB a block).
constexpr std::size_t flows_per_block = 4096;

// More threads than this gain little: the blocks are still written out one after another.
constexpr unsigned max_format_threads = 16;

void write_flows(Output& out, const Analysis& a, std::size_t max_flows, unsigned threads) {
  const std::size_t n = std::min(max_flows, a.flows.size());
  threads = std::min(threads, max_format_threads);
  out.print("\"flows\": [");
  if (threads <= 1 || n <= 2 * flows_per_block) {
    for (std::size_t i = 0; i < n; ++i) {
      {
        auto line = out.line(max_flow_line);
        flow_line(line, a.flows[i], i);
      }
      out.end_item();
    }
  } else {
    // At 100k+ flows printing them is a good part of a parallel analysis's serial end: threads
    // format blocks side by side, and the blocks are written out in order.
    std::vector<fmt::memory_buffer> blocks(threads);
    for (std::size_t at = 0; at < n; at += threads * flows_per_block) {
      std::vector<std::future<void>> helpers;
      for (unsigned t = 1; t < threads; ++t) {
        const std::size_t begin = std::min(n, at + t * flows_per_block);
        const std::size_t end = std::min(n, begin + flows_per_block);
        if (begin == end) break;
        helpers.push_back(async_or_deferred([&, t, begin, end] {
          blocks[t].clear();
          format_flows(blocks[t], a, begin, end);
        }));
      }
      blocks[0].clear();
      format_flows(blocks[0], a, at, std::min(n, at + flows_per_block));
      for (auto& h : helpers) h.wait();
      for (auto& h : helpers) h.get();  // a helper's failure (bad_alloc) is this call's
      for (std::size_t t = 0; t <= helpers.size(); ++t)
        out.write_through(std::string_view(blocks[t].data(), blocks[t].size()));
    }
  }
  out.print("{}", n ? "\n]" : "]");
}

void write_timeline(Output& out, const Analysis::Timeline& t) {
  out.print("\"timeline\": {{\"bin_ms\": {}, \"start_ns\": {}, \"frames_outside\": {}, \"bins\": [",
            t.bin_ms, t.start_ns, t.frames_outside);
  bool first = true;
  for (std::size_t i = 0; i < t.bins.size(); ++i) {
    const TimelineBin& b = t.bins[i];
    if (b.roce_bytes == 0 && b.cnp == 0 && b.pfc_xoff == 0 && b.ecn_ce == 0) continue;
    out.print(
        "{}\n  {{\"t_ms\": {}, \"roce_bytes\": {}, \"cnp\": {}, \"pfc_xoff\": {}, \"ecn_ce\": {}}}",
        first ? "" : ",", static_cast<std::uint64_t>(i) * t.bin_ms, b.roce_bytes, b.cnp, b.pfc_xoff,
        b.ecn_ce);
    first = false;
  }
  out.print("{}", first ? "]}" : "\n]}");
}

}  // namespace

void write_json(const Analysis& a, const std::function<void(std::string_view)>& sink,
                std::size_t max_flows, const json& extra, unsigned threads) {
  json head = head_json(a);
  for (const auto& [key, value] : extra.items()) head[key] = value;
  Output out(sink);
  out.print("{{\n");
  for (const auto& [key, value] : head.items())
    out.print("{}: {},\n", json(key).dump(), value.dump());
  write_flows(out, a, max_flows, threads);
  out.print(",\n");
  write_timeline(out, a.timeline);
  out.print("\n}}\n");
}

std::string to_json_text(const Analysis& a, std::size_t max_flows, const json& extra) {
  std::string text;
  write_json(
      a, [&](std::string_view piece) { text.append(piece); }, max_flows, extra);
  return text;
}

}  // namespace rocehil::capture
