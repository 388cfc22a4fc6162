#include "rocehil/capture/analyzer.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cstring>
#include <stdexcept>
#include <tuple>
#include <type_traits>

#include "analysis/flat_table.hpp"
#include "analysis/flow_fold.hpp"
#include "analysis/flow_report.hpp"
#include "analysis/flow_tables.hpp"
#include "analysis/mirror_sessions.hpp"
#include "analysis/pause_tracker.hpp"
#include "analysis/request_psns.hpp"
#include "frames/frame_layout.hpp"
#include "frames/mirror_layout.hpp"
#include "frames/mirror_template.hpp"
#include "rocehil/common/roce_wire.hpp"
#include "rocehil/common/units.hpp"

namespace rocehil::capture {

namespace w = rocehil::wire;

namespace {

// The Ethernet source MAC, from the (mirrored) frame's start: present in every frame located as
// PFC or PAUSE.
constexpr std::size_t source_mac_offset = 6;

// The length a mirrored frame had on the wire: what the tunnel carried, or more where the switch
// cut it and its IP header says how long it was.
// Inlined by force: called once per mirrored frame, and GCC would rather not.
__attribute__((always_inline)) inline std::uint64_t mirrored_wire_len(
    const std::uint8_t* d, const FrameLayout& l) noexcept {
  std::uint64_t len = l.carried;
  if (l.ip_version == 4) len = std::max<std::uint64_t>(len, l.l3 - l.l2 + load_be16(d + l.l3 + 2));
  if (l.ip_version == 6)
    len = std::max<std::uint64_t>(len, l.l3 - l.l2 + 40 + load_be16(d + l.l3 + 4));
  return len;
}

// The observation window: the frames' first and last timestamps, widened to the window the
// options give (a live capture's start and stop). With no frames it is the options' window, or
// empty.
std::pair<std::uint64_t, std::uint64_t> observation_window(const Analysis& a,
                                                           const AnalyzerOptions& o) {
  std::uint64_t start = 0, end = 0;
  if (a.frames > 0) {
    start = o.window_start_ns != 0 ? std::min(a.first_ns, o.window_start_ns) : a.first_ns;
    end = std::max(a.last_ns, o.window_end_ns);
  } else {
    start = o.window_start_ns != 0 ? o.window_start_ns : o.window_end_ns;
    end = std::max(start, o.window_end_ns);
  }
  return {start, end};
}

// A later part's PFC or PAUSE frame, kept for the pause accounting of the parts before it:
// whether it continues a pause depends on the frames before the boundary.
struct PauseEvent {
  std::uint64_t ts_ns = 0;
  std::array<std::uint8_t, 6> source_mac{};
  bool pfc = false;
  double quantum_ns = 0;                     // of the link the frame came in on
  std::uint16_t class_enable = 0;            // PFC
  std::array<std::uint8_t, 16> quanta_be{};  // PFC: eight big-endian quanta; PAUSE: the first
};

// A frame whose layers are located and, for a flow's packet, whose table slot is on its way.
// `ts_ns` and `wire_len` are what the frame is counted with: a remote mirror's are the mirrored
// frame's (locate() sets them as it counts the frame in its session).
struct Located {
  FrameLayout layout;
  V4Key v4;
  V6Key v6;
  std::uint64_t hash = 0;
  std::uint64_t ts_ns = 0;
  std::uint64_t wire_len = 0;
};

}  // namespace

struct Analyzer::State {
  explicit State(const AnalyzerOptions& o)
      : options(o),
        bin_ns(std::max<std::uint64_t>(1, std::uint64_t{o.bin_ms} * 1'000'000)),
        quantum_ns(pause_quanta_to_ns(1, o.link_gbps)),
        pauses(o) {
    for (const double gbps : o.interface_link_gbps)
      interface_quantum_ns.push_back(pause_quanta_to_ns(1, gbps));
    if (!interface_quantum_ns.empty()) link_quanta.resize(interface_quantum_ns.size() + 1);
  }

  AnalyzerOptions options;
  std::uint64_t bin_ns;
  // One pause quantum (512 bit times) of the link, and of each of a file's interfaces.
  double quantum_ns;
  std::vector<double> interface_quantum_ns;
  double quantum_ns_of(std::uint32_t interface) const {
    return interface < interface_quantum_ns.size() ? interface_quantum_ns[interface] : quantum_ns;
  }
  // With interface speeds: each class's quanta per interface (the last: interfaces beyond the
  // list), so the pause requested is summed in one order however the file was cut into parts.
  std::vector<std::array<std::uint64_t, PauseTracker::class_count>> link_quanta;
  void add_link_quanta(std::uint32_t interface, std::size_t cls, std::uint16_t quanta) {
    if (link_quanta.empty()) return;
    link_quanta[std::min<std::size_t>(interface, link_quanta.size() - 1)][cls] += quanta;
  }
  void append_link_quanta(const State& b) {
    for (std::size_t i = 0; i < link_quanta.size() && i < b.link_quanta.size(); ++i)
      for (std::size_t c = 0; c < PauseTracker::class_count; ++c)
        link_quanta[i][c] += b.link_quanta[i][c];
  }
  // The pause requested of class `cls`, `quanta` in all.
  double requested_ns(std::size_t cls, std::uint64_t quanta) const {
    if (link_quanta.empty()) return pause_quanta_to_ns(quanta, options.link_gbps);
    double ns = 0;
    for (std::size_t i = 0; i < link_quanta.size(); ++i)
      ns += static_cast<double>(link_quanta[i][cls]) * quantum_ns_of(static_cast<std::uint32_t>(i));
    return ns;
  }
  bool later_part = false;  // constructed with LaterPart
  // A file's later part: keeps each flow's first request and every pause frame for append().
  bool keeps_events = false;
  // Live workers' pause accountings besides this one's (combine()), added up in result().
  std::vector<PauseTracker> more_pauses;
  Analysis totals;  // flows, the CNP table and the timeline live below until result()
  FlowTables<V4Key> v4_flows;
  FlowTables<V6Key> v6_flows;
  // A first part after fold(): every part's flows, in shards; v4_flows and v6_flows are empty.
  FlowShards folded;
  FlatTable<std::uint32_t, std::uint64_t, QpHash> cnp_by_qp{256};
  std::vector<TimelineBin> bins;
  std::uint64_t frames_outside = 0;
  PauseTracker pauses;
  MirrorSessions mirror_sessions;
  // The last session seen, to recognise its next frames by their headers; its index and shape.
  MirrorTemplate mirror_template;
  std::size_t template_session = 0;
  MirrorSessions::Shape template_shape;
  bool template_timed = false;  // its ERSPAN III timestamps time its frames
  SwitchClock switch_clock;
  bool started = false;
  std::uint64_t start_ns = 0;
  // The bin of the previous frame, [bin_lo, bin_hi): most frames fall in it and skip a division.
  std::uint64_t bin_lo = 1, bin_hi = 0;
  std::size_t bin_index = 0;

  // Later parts only: each flow's first request, and every PFC and PAUSE frame, in order.
  std::vector<FlowHead<V4Key>> v4_heads;
  std::vector<FlowHead<V6Key>> v6_heads;
  std::vector<PauseEvent> pause_events;

  static constexpr std::size_t lookahead = 32;
  std::array<Located, lookahead> located;

  TimelineBin* bin_for(std::uint64_t ts) {
    if (ts >= bin_lo && ts < bin_hi) return &bins[bin_index];
    const std::uint64_t index = ts <= start_ns ? 0 : (ts - start_ns) / bin_ns;
    if (index >= options.max_bins) {
      ++frames_outside;
      return nullptr;
    }
    if (index >= bins.size()) bins.resize(static_cast<std::size_t>(index) + 1);
    if (ts >= start_ns) {  // earlier frames share bin 0 but do not define its range
      bin_lo = start_ns + index * bin_ns;
      bin_hi = bin_lo + bin_ns;
      bin_index = static_cast<std::size_t>(index);
    }
    return &bins[static_cast<std::size_t>(index)];
  }

  void locate(const Frame& f, Located& x);
  void count(const Frame& f, Located& x);
  void count_roce(const Frame& f, const Located& x);
  template <class Key>
  void count_flow_packet(FlowTables<Key>& tables, const Key& key, const Frame& f, const Located& x,
                         std::uint8_t opcode, bool ce, DscpCounts& by_class);
  void count_pfc(const Frame& f, const Located& x);
  void count_pause(const Frame& f, const Located& x);
  void new_session_frame(const Frame& f, Located& x);
  void count_mirror(const Frame& f, Located& x, const MirrorHeader& mirror,
                    const MirrorSessions::Shape& shape, const MirrorFrameFields& v,
                    MirrorSession& s, bool timed);

  void replay_pause(const PauseEvent& e) {
    if (e.pfc) {
      pauses.pfc(e.ts_ns, e.source_mac.data(), e.class_enable, e.quanta_be.data(), e.quantum_ns);
    } else {
      pauses.pause(e.ts_ns, e.source_mac.data(), load_be16(e.quanta_be.data()), e.quantum_ns);
    }
  }

  // Analyzer::fold and combine, piece by piece (the flows: flow_fold.hpp).
  void append_totals(const Analysis& b);
  void append_timeline(const State& b);
};

// Inlined by force into add()'s loop, as the compiler did while it was smaller.
__attribute__((always_inline)) inline void Analyzer::State::locate(const Frame& f, Located& x) {
  x.ts_ns = f.ts_ns;
  x.wire_len = f.wire_len;
  if (f.link_type != link_type::ethernet) {
    x.layout = FrameLayout{};
    return;
  }
  // A remote mirror's frames are counted here, in capture order as count() does. A frame of the
  // session the template knows is opened without reading its tunnel field by field
  // (mirror_template.hpp); locate_frame() is called from one place, so that it is inlined as
  // for an unwrapped frame.
  FrameLayout& l = x.layout;
  const bool known_session = mirror_template.open(f.data, f.caplen, l);
  if (!known_session) {
    l = FrameLayout{};
    l.end = f.caplen;
  }
  locate_frame(f.data, l);
  if (known_session) {
    // A tunnel inside the mirrored frame makes it malformed, and malformed is not counted.
    if (l.kind != FrameKind::mirror_malformed)
      count_mirror(f, x, mirror_template.header(), template_shape, mirror_template.read(f.data),
                   mirror_sessions.session(template_session), template_timed);
  } else if (opened_tunnel(l)) {
    new_session_frame(f, x);
  }
  if (x.layout.kind != FrameKind::roce || f.data[x.layout.bth] == w::opcode::cnp) return;
  const std::uint32_t dest_qp = bth_dest_qp(f.data + x.layout.bth);
  const std::uint8_t* ip = f.data + x.layout.l3;
  if (x.layout.ip_version == 4) {
    x.v4 = V4Key::of(ip, dest_qp);
    x.hash = x.v4.hash();
    v4_flows.state.prefetch(x.hash);
  } else {
    x.v6 = V6Key::of(ip, dest_qp);
    x.hash = x.v6.hash();
    v6_flows.state.prefetch(x.hash);
  }
}

// A remote mirror's frame, of session `s` (whose header is `mirror` but for `v`): the session
// counted, and the time and length the mirrored frame is counted with set. `timed`: by the
// switch's clock.
__attribute__((always_inline)) inline void Analyzer::State::count_mirror(
    const Frame& f, Located& x, const MirrorHeader& mirror, const MirrorSessions::Shape& shape,
    const MirrorFrameFields& v, MirrorSession& s, bool timed) {
  FrameTiming timing = FrameTiming::capture;
  std::int64_t clock_offset_ns = 0;
  std::uint64_t at_switch = 0;
  if (timed) {
    if (switch_clock.time_ns(mirror, v.timestamp, v.seconds, f.ts_ns, at_switch)) {
      timing = FrameTiming::switch_clock;
      clock_offset_ns = static_cast<std::int64_t>(f.ts_ns - at_switch);
      x.ts_ns = at_switch;
    } else {
      timing = FrameTiming::clock_too_far;
    }
  }
  x.wire_len = mirrored_wire_len(f.data, x.layout);
  totals.mirror.mirrored_bytes += x.wire_len;  // mirror.frames: its sessions' frames, in result()
  MirrorSessions::count_frame(s, shape, v, f.wire_len, timing, clock_offset_ns);
}

// A tunnel whose session's headers are not the ones learned: its mirrored frame located, the
// headers learned from it, and the frame counted (from its header read field by field where
// too long to learn).
void Analyzer::State::new_session_frame(const Frame& f, Located& x) {
  locate_frame(f.data, x.layout);
  if (x.layout.kind == FrameKind::mirror_malformed) return;
  MirrorHeader mirror;
  read_mirror_header(f.data, f.caplen, x.layout, mirror);
  const std::size_t session = mirror_sessions.index_of(mirror);
  const MirrorSessions::Shape shape = MirrorSessions::shape_of(mirror, options.mirror_sequences);
  const bool timed = mirror.has_timestamp && options.switch_timestamps;
  if (mirror_template.learn(f.data, f.caplen, x.layout)) {
    template_session = session;
    template_shape = shape;
    template_timed = timed;
    count_mirror(f, x, mirror_template.header(), shape, mirror_template.read(f.data),
                 mirror_sessions.session(session), timed);
  } else {
    count_mirror(f, x, mirror, shape, frame_fields(mirror), mirror_sessions.session(session),
                 timed);
  }
}

void Analyzer::State::count(const Frame& f, Located& x) {
  const FrameLayout& l = x.layout;
  Analysis& t = totals;
  if (t.frames == 0) t.first_ns = t.last_ns = x.ts_ns;
  if (!started) {  // a later part has its start already
    started = true;
    start_ns = x.ts_ns;
  }
  ++t.frames;
  t.bytes += f.wire_len;
  t.first_ns = std::min(t.first_ns, x.ts_ns);
  t.last_ns = std::max(t.last_ns, x.ts_ns);
  if (f.link_type != link_type::ethernet) {
    ++t.non_ethernet;
    return;
  }
  if (l.kind == FrameKind::mirror_malformed) {
    ++t.mirror.malformed;
    return;
  }
  t.vlan_tagged += l.vlan_tags > 0;
  t.ipv4 += l.ip_version == 4;
  t.ipv6 += l.ip_version == 6;
  switch (l.kind) {
    case FrameKind::roce: count_roce(f, x); break;
    case FrameKind::roce_malformed: ++t.roce.malformed; break;
    case FrameKind::roce_truncated: ++t.roce.truncated; break;
    case FrameKind::pfc: count_pfc(f, x); break;
    case FrameKind::pause: count_pause(f, x); break;
    case FrameKind::mac_control_malformed: ++t.pfc.malformed; break;
    case FrameKind::mirror_malformed:  // counted above
    case FrameKind::other: break;
  }
}

void Analyzer::State::count_roce(const Frame& f, const Located& x) {
  const std::uint8_t* bth = f.data + x.layout.bth;
  const std::uint8_t opcode = bth[0];
  const bool ce = ip_ecn(f.data, x.layout) == w::ecn_ce;
  Analysis::Roce& r = totals.roce;
  ++r.packets;
  r.bytes += x.wire_len;
  r.ecn_ce += ce;
  ++r.by_opcode[opcode];
  DscpCounts& by_class = r.by_dscp[ip_dscp(f.data, x.layout)];
  ++by_class.packets;
  by_class.bytes += x.wire_len;
  by_class.ecn_ce += ce;
  TimelineBin* bin = bin_for(x.ts_ns);
  if (bin) {
    bin->roce_bytes += x.wire_len;
    bin->ecn_ce += ce;
  }
  if (opcode == w::opcode::cnp) {
    if (bin) ++bin->cnp;
    ++by_class.cnps;
    ++cnp_by_qp[bth_dest_qp(bth)];
    return;
  }
  if (x.layout.ip_version == 4) {
    count_flow_packet(v4_flows, x.v4, f, x, opcode, ce, by_class);
  } else {
    count_flow_packet(v6_flows, x.v6, f, x, opcode, ce, by_class);
  }
}

template <class Key>
void Analyzer::State::count_flow_packet(FlowTables<Key>& tables, const Key& key, const Frame& f,
                                        const Located& x, std::uint8_t opcode, bool ce,
                                        DscpCounts& by_class) {
  FlowState& s = tables.state.find_or_insert(key, x.hash);
  if (s.packets == 0) {
    s.first_ns = x.ts_ns;
    s.psn_word = std::uint64_t{load_be16(f.data + x.layout.l4)} << 48;
  }
  ++s.packets;
  s.bytes += x.wire_len;
  s.ecn_ce += ce;
  s.first_ns = std::min(s.first_ns, x.ts_ns);
  s.last_ns = std::max(s.last_ns, x.ts_ns);

  // Extended headers are read only when captured whole; RC is the transport that has them here.
  const std::uint8_t* bth = f.data + x.layout.bth;
  const std::uint32_t after_bth =
      x.layout.end - x.layout.bth - static_cast<std::uint32_t>(w::bth_size);
  if (opcode == w::opcode::rc_acknowledge) {
    if (after_bth < w::aeth_size) return;
    const std::uint8_t syndrome = bth[w::bth_size];
    Analysis::Roce& r = totals.roce;
    if (w::aeth::is_nak(syndrome)) {
      ++tables.events[key].naks;
      ++r.naks;
      ++by_class.naks;
    } else if (w::aeth::is_rnr_nak(syndrome)) {
      ++r.rnr_naks;
      ++by_class.rnr_naks;
    } else if (w::aeth::is_ack(syndrome)) {
      ++r.acks;
      ++by_class.acks;
    }
    return;
  }
  if (!is_connected_request(opcode)) return;

  const std::uint32_t span = request_span(opcode, bth, after_bth);
  const std::uint32_t psn = bth_psn(bth);
  // `s` stays valid below: growing the events table does not move the state table's slots.
  switch (judge_psn(s.highest_psn(), s.highest_span(), psn)) {
    case PsnVerdict::retransmit: ++tables.events[key].retransmits; return;
    case PsnVerdict::gap: ++tables.events[key].psn_gaps; break;
    case PsnVerdict::first:
      if (keeps_events) {
        if constexpr (std::is_same_v<Key, V4Key>) {
          v4_heads.push_back({key, psn});
        } else {
          v6_heads.push_back({key, psn});
        }
      }
      break;
    case PsnVerdict::in_order: break;
  }
  s.set_highest(psn, span);
}

void Analyzer::State::count_pfc(const Frame& f, const Located& x) {
  const FrameLayout& l = x.layout;
  const std::uint8_t* p = f.data + l.l3;
  const std::uint8_t* source_mac = f.data + l.l2 + source_mac_offset;
  const std::uint16_t class_enable = load_be16(p + 2);
  const double link_quantum_ns = quantum_ns_of(f.interface);
  ++totals.pfc.frames;
  bool any_xoff = false;
  for (std::size_t prio = 0; prio < 8; ++prio) {
    if (!(class_enable & (1u << prio))) continue;
    PfcPriority& counts = totals.pfc.priorities[prio];
    const std::uint16_t quanta = load_be16(p + 4 + 2 * prio);
    ++counts.frames;
    counts.xoff += quanta > 0;
    counts.xon += quanta == 0;
    counts.quanta += quanta;
    add_link_quanta(f.interface, prio, quanta);
    any_xoff |= quanta > 0;
  }
  if (keeps_events) {
    PauseEvent& e = pause_events.emplace_back();
    e.ts_ns = x.ts_ns;
    std::memcpy(e.source_mac.data(), source_mac, 6);
    e.pfc = true;
    e.quantum_ns = link_quantum_ns;
    e.class_enable = class_enable;
    std::memcpy(e.quanta_be.data(), p + 4, 16);
  } else {
    pauses.pfc(x.ts_ns, source_mac, class_enable, p + 4, link_quantum_ns);
  }
  TimelineBin* bin = bin_for(x.ts_ns);
  if (bin && any_xoff) ++bin->pfc_xoff;
}

void Analyzer::State::count_pause(const Frame& f, const Located& x) {
  const FrameLayout& l = x.layout;
  const std::uint8_t* source_mac = f.data + l.l2 + source_mac_offset;
  const std::uint16_t quanta = load_be16(f.data + l.l3 + 2);
  const double link_quantum_ns = quantum_ns_of(f.interface);
  ++totals.pause_8023x.frames;
  totals.pause_8023x.xoff += quanta > 0;
  totals.pause_8023x.quanta += quanta;
  add_link_quanta(f.interface, PauseTracker::pause_8023x, quanta);
  if (keeps_events) {
    PauseEvent& e = pause_events.emplace_back();
    e.ts_ns = x.ts_ns;
    std::memcpy(e.source_mac.data(), source_mac, 6);
    std::memcpy(e.quanta_be.data(), f.data + l.l3 + 2, 2);
    e.quantum_ns = link_quantum_ns;
  } else {
    pauses.pause(x.ts_ns, source_mac, quanta, link_quantum_ns);
  }
}

Analyzer::Analyzer(const AnalyzerOptions& options) : state_(std::make_unique<State>(options)) {}

Analyzer::Analyzer(const AnalyzerOptions& options, LaterPart part)
    : state_(std::make_unique<State>(options)) {
  state_->later_part = true;
  state_->keeps_events = !part.live_worker;
  state_->started = true;
  state_->start_ns = part.timeline_start_ns;
}

Analyzer::~Analyzer() = default;

void Analyzer::set_window_end(std::uint64_t ns) noexcept {
  state_->options.window_end_ns = ns;
}

void Analyzer::add(std::span<const Frame> frames) {
  State& st = *state_;
  if (!st.folded.empty()) throw std::logic_error("Analyzer::add: the parts were folded already");
  for (std::size_t base = 0; base < frames.size(); base += State::lookahead) {
    const std::size_t n = std::min(State::lookahead, frames.size() - base);
    for (std::size_t i = 0; i < n; ++i) st.locate(frames[base + i], st.located[i]);
    for (std::size_t i = 0; i < n; ++i) st.count(frames[base + i], st.located[i]);
  }
}

// ---- append: folding a later part in --------------------------------------------------------

void Analyzer::State::append_totals(const Analysis& b) {
  Analysis& a = totals;
  if (b.frames > 0) {
    a.first_ns = a.frames > 0 ? std::min(a.first_ns, b.first_ns) : b.first_ns;
    a.last_ns = a.frames > 0 ? std::max(a.last_ns, b.last_ns) : b.last_ns;
  }
  a.frames += b.frames;
  a.bytes += b.bytes;
  a.non_ethernet += b.non_ethernet;
  a.vlan_tagged += b.vlan_tagged;
  a.ipv4 += b.ipv4;
  a.ipv6 += b.ipv6;
  a.roce.packets += b.roce.packets;
  a.roce.malformed += b.roce.malformed;
  a.roce.truncated += b.roce.truncated;
  a.mirror.malformed += b.mirror.malformed;
  a.mirror.mirrored_bytes += b.mirror.mirrored_bytes;
  a.roce.ecn_ce += b.roce.ecn_ce;
  a.roce.bytes += b.roce.bytes;
  a.roce.acks += b.roce.acks;
  a.roce.naks += b.roce.naks;
  a.roce.rnr_naks += b.roce.rnr_naks;
  for (std::size_t i = 0; i < a.roce.by_opcode.size(); ++i)
    a.roce.by_opcode[i] += b.roce.by_opcode[i];
  for (std::size_t i = 0; i < a.roce.by_dscp.size(); ++i) {
    DscpCounts& to = a.roce.by_dscp[i];
    const DscpCounts& from = b.roce.by_dscp[i];
    to.packets += from.packets;
    to.bytes += from.bytes;
    to.ecn_ce += from.ecn_ce;
    to.cnps += from.cnps;
    to.acks += from.acks;
    to.naks += from.naks;
    to.rnr_naks += from.rnr_naks;
  }
  a.pfc.frames += b.pfc.frames;
  a.pfc.malformed += b.pfc.malformed;
  for (std::size_t i = 0; i < a.pfc.priorities.size(); ++i) {
    a.pfc.priorities[i].frames += b.pfc.priorities[i].frames;
    a.pfc.priorities[i].xoff += b.pfc.priorities[i].xoff;
    a.pfc.priorities[i].xon += b.pfc.priorities[i].xon;
    a.pfc.priorities[i].quanta += b.pfc.priorities[i].quanta;
  }
  a.pause_8023x.frames += b.pause_8023x.frames;
  a.pause_8023x.xoff += b.pause_8023x.xoff;
  a.pause_8023x.quanta += b.pause_8023x.quanta;
}

void Analyzer::State::append_timeline(const State& b) {
  if (!started && b.started) {
    started = true;
    start_ns = b.start_ns;
  }
  if (b.bins.size() > bins.size()) bins.resize(b.bins.size());
  for (std::size_t i = 0; i < b.bins.size(); ++i) {
    bins[i].roce_bytes += b.bins[i].roce_bytes;
    bins[i].cnp += b.bins[i].cnp;
    bins[i].pfc_xoff += b.bins[i].pfc_xoff;
    bins[i].ecn_ce += b.bins[i].ecn_ce;
  }
  frames_outside += b.frames_outside;
}

bool Analyzer::fold(std::span<Analyzer* const> later, std::span<const Replay> replays,
                    unsigned threads, unsigned shards) {
  State& a = *state_;
  if (a.later_part || replays.size() != later.size())
    throw std::logic_error("Analyzer::fold: fold later parts, in order, into the first part");
  if (shards > 16 || (shards & (shards - 1)) != 0)
    throw std::logic_error("Analyzer::fold: shards must be a power of two up to 16");
  for (const Analyzer* next : later) {
    const State& b = *next->state_;
    if (!b.later_part || !b.keeps_events)
      throw std::logic_error("Analyzer::fold: the parts must be LaterPart analyzers of a file");
  }
  for (const Analyzer* next : later) {
    const State& b = *next->state_;
    a.append_totals(b.totals);
    a.append_link_quanta(b);
    a.append_timeline(b);
    b.cnp_by_qp.for_each([&](std::uint32_t qp, std::uint64_t n) { a.cnp_by_qp[qp] += n; });
    for (const PauseEvent& e : b.pause_events) a.replay_pause(e);
    a.mirror_sessions.append(b.mirror_sessions);
  }
  std::vector<PartFlows> parts;
  const bool first_fold = a.folded.empty();
  if (first_fold) {
    a.folded.bits =
        shards > 0 ? static_cast<unsigned>(std::countr_zero(shards)) : shard_bits_for(threads);
    if (a.folded.bits == 0) {  // one shard: this part's own tables, merged into as they are
      a.folded.v4.push_back(std::move(a.v4_flows));
      a.folded.v6.push_back(std::move(a.v6_flows));
    } else {
      parts.push_back({&a.v4_flows, &a.v6_flows, nullptr, nullptr, {}});
    }
  }
  for (std::size_t k = 0; k < later.size(); ++k) {
    const State& b = *later[k]->state_;
    parts.push_back({&b.v4_flows, &b.v6_flows, &b.v4_heads, &b.v6_heads, replays[k]});
  }
  const bool as_predicted = fold_flows(a.folded, parts, threads);
  if (first_fold) {
    a.v4_flows = FlowTables<V4Key>();  // its flows are in the shards now
    a.v6_flows = FlowTables<V6Key>();
  }
  return as_predicted;
}

void Analyzer::append(Analyzer&& next, const Replay& replay) {
  // One part: a state other than predicted is set right before any part follows.
  Analyzer* part = &next;
  fold(std::span<Analyzer* const>(&part, 1), std::span<const Replay>(&replay, 1), 1);
}

std::unique_ptr<Analyzer> Analyzer::combine(const AnalyzerOptions& options,
                                            std::vector<std::unique_ptr<Analyzer>>& workers) {
  auto joined = std::make_unique<Analyzer>(options);
  State& a = *joined->state_;
  // Each event with its place in worker order, so equal timestamps keep that order: std::sort
  // with a total order does what std::stable_sort would, without its temporary buffer (which
  // clang's AddressSanitizer reports as an alloc-dealloc mismatch with libstdc++ 12).
  std::vector<std::pair<const PauseEvent*, std::size_t>> pause_events;
  std::vector<PauseTracker*> live_pauses;
  for (const auto& worker : workers) {
    State& b = *worker->state_;
    if (!b.later_part)
      throw std::logic_error("Analyzer::combine: construct the workers' analyzers as LaterPart");
    if (!b.keeps_events && b.pauses.seen()) live_pauses.push_back(&b.pauses);
    a.append_totals(b.totals);
    a.append_link_quanta(b);
    a.append_timeline(b);
    b.cnp_by_qp.for_each([&](std::uint32_t qp, std::uint64_t n) { a.cnp_by_qp[qp] += n; });
    // No heads: no worker's frames follow another's, so no judgement joins across them.
    add_flows(a.v4_flows, b.v4_flows);
    add_flows(a.v6_flows, b.v6_flows);
    a.mirror_sessions.add(b.mirror_sessions);
    for (const PauseEvent& e : b.pause_events) pause_events.emplace_back(&e, pause_events.size());
  }
  std::sort(pause_events.begin(), pause_events.end(), [](const auto& x, const auto& y) {
    return x.first->ts_ns != y.first->ts_ns ? x.first->ts_ns < y.first->ts_ns : x.second < y.second;
  });
  if (!live_pauses.empty()) {
    if (!pause_events.empty())
      throw std::logic_error("Analyzer::combine: the workers of one capture are all live or none");
    a.pauses = std::move(*live_pauses.front());
    for (std::size_t w = 1; w < live_pauses.size(); ++w)
      a.more_pauses.push_back(std::move(*live_pauses[w]));
  }
  for (const auto& e : pause_events) a.replay_pause(*e.first);
  return joined;
}

Analysis Analyzer::result() const {
  const State& st = *state_;
  Analysis a = st.totals;
  a.options = st.options;

  std::tie(a.window_start_ns, a.window_end_ns) = observation_window(a, st.options);
  const double window_ns = static_cast<double>(a.window_end_ns - a.window_start_ns);
  const auto fraction = [&](double paused_ns) { return window_ns > 0 ? paused_ns / window_ns : 0; };
  PauseTracker::Totals pauses = st.pauses.totals(a.window_start_ns, a.window_end_ns);
  for (const PauseTracker& more : st.more_pauses)
    PauseTracker::add(pauses, more.totals(a.window_start_ns, a.window_end_ns));
  for (std::size_t i = 0; i < a.pfc.priorities.size(); ++i) {
    PfcPriority& p = a.pfc.priorities[i];
    const PauseTracker::ClassTotals& c = pauses.classes[i];
    p.pause_ns = st.requested_ns(i, p.quanta);
    p.paused_ns = c.paused_ns;
    p.longest_pause_ns = c.longest_pause_ns;
    p.pause_fraction = fraction(c.paused_ns);
    p.storms = c.storms;
  }
  Analysis::Pause& pause = a.pause_8023x;
  const PauseTracker::ClassTotals& c = pauses.classes[PauseTracker::pause_8023x];
  pause.pause_ns = st.requested_ns(PauseTracker::pause_8023x, pause.quanta);
  pause.paused_ns = c.paused_ns;
  pause.longest_pause_ns = c.longest_pause_ns;
  pause.pause_fraction = fraction(c.paused_ns);
  pause.storms = c.storms;
  a.pfc.storms = std::move(pauses.storms);
  a.pfc.direction_known =
      st.options.direction != MirrorDirection::unknown || !st.options.spine_macs.empty();
  a.pfc.from_spine = pauses.from_spine;

  a.mirror.sessions = st.mirror_sessions.result();
  for (const MirrorSession& s : a.mirror.sessions) a.mirror.frames += s.frames;

  a.cnp.by_dest_qp.reserve(st.cnp_by_qp.size());
  st.cnp_by_qp.for_each([&](std::uint32_t qp, std::uint64_t n) {
    a.cnp.by_dest_qp.emplace_back(qp, n);
    a.cnp.count += n;
  });
  std::sort(a.cnp.by_dest_qp.begin(), a.cnp.by_dest_qp.end());

  if (st.folded.empty()) {
    a.flows = flows_in_order(std::span(&st.v4_flows, 1), std::span(&st.v6_flows, 1));
  } else {
    a.flows = flows_in_order(st.folded.v4, st.folded.v6);
  }

  a.timeline.bin_ms = st.options.bin_ms;
  a.timeline.start_ns = st.start_ns;
  a.timeline.bins = st.bins;
  a.timeline.frames_outside = st.frames_outside;
  return a;
}

}  // namespace rocehil::capture
