#include "rocehil/capture/analyzer.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <tuple>

#include "flat_table.hpp"
#include "frame_layout.hpp"
#include "pause_tracker.hpp"
#include "rocehil/common/roce_wire.hpp"
#include "rocehil/common/units.hpp"

namespace rocehil::capture {

namespace w = rocehil::wire;

namespace {

// Flow keys as the per-frame path builds them: address bytes as captured, no conversion. IPv4
// flows (nearly all) get a 12-byte key, so their table slot is one cache line; IPv6 flows have
// a table of their own. A FlowKey (IpAddress) is made once per flow, in result().
struct V4Key {
  std::uint32_t src = 0;
  std::uint32_t dst = 0;
  std::uint32_t dest_qp = 0;
  bool operator==(const V4Key&) const = default;

  static V4Key of(const std::uint8_t* ip, std::uint32_t dest_qp) {
    V4Key k;
    std::memcpy(&k.src, ip + 12, 4);
    std::memcpy(&k.dst, ip + 16, 4);
    k.dest_qp = dest_qp;
    return k;
  }
  FlowKey to_flow_key() const {
    return {IpAddress::v4(reinterpret_cast<const std::uint8_t*>(&src)),
            IpAddress::v4(reinterpret_cast<const std::uint8_t*>(&dst)), dest_qp};
  }
  std::uint64_t hash() const noexcept {
    return mix64((std::uint64_t{src} << 32 | dst) * 0x9e3779b97f4a7c15ull + dest_qp);
  }
};

struct V6Key {
  std::uint64_t words[4] = {};  // source then destination address
  std::uint32_t dest_qp = 0;
  bool operator==(const V6Key&) const = default;

  static V6Key of(const std::uint8_t* ip, std::uint32_t dest_qp) {
    V6Key k;
    std::memcpy(k.words, ip + 8, 32);
    k.dest_qp = dest_qp;
    return k;
  }
  FlowKey to_flow_key() const {
    const auto* b = reinterpret_cast<const std::uint8_t*>(words);
    return {IpAddress::v6(b), IpAddress::v6(b + 16), dest_qp};
  }
  std::uint64_t hash() const noexcept {
    // Independent multiplies (they run in parallel), then one finaliser.
    return mix64(words[0] * 0x9e3779b97f4a7c15ull + words[1] * 0xc2b2ae3d27d4eb4full +
                 words[2] * 0x165667b19e3779f9ull + words[3] * 0x27d4eb2f165667c5ull + dest_qp);
  }
};

template <class Key>
struct KeyHash {
  std::uint64_t operator()(const Key& k) const noexcept { return k.hash(); }
};

struct QpHash {
  std::uint64_t operator()(std::uint32_t qp) const noexcept { return mix64(qp); }
};

// What every packet of a flow touches: with the slot's tag and a V4Key, one cache line.
struct FlowState {
  std::uint64_t highest_psn : 24 = 0;
  // PSNs the request at highest_psn occupies: 1, or a READ REQUEST's response packets (at most
  // 2^24 - 1: no PSN is ever more than 2^23 ahead); 0 until the flow's first request.
  std::uint64_t highest_span : 24 = 0;
  // The UDP source port of the flow's first packet, in the bits the PSNs leave: a second table
  // for it cost 13-20 % of the frame rate at 178k flows (bench/RESULTS.md).
  std::uint64_t udp_sport : 16 = 0;
  std::uint64_t packets = 0;
  std::uint64_t bytes = 0;
  std::uint64_t ecn_ce = 0;
  std::uint64_t first_ns = 0;
  std::uint64_t last_ns = 0;
};

// What only a loss or a NAK touches, kept apart so that healthy traffic never loads it.
struct FlowEvents {
  std::uint64_t psn_gaps = 0;
  std::uint64_t retransmits = 0;
  std::uint64_t naks = 0;
};

static_assert(sizeof(FlatTable<V4Key, FlowState, KeyHash<V4Key>>::Slot) == 64,
              "an IPv4 flow's slot is one cache line");

template <class Key>
struct FlowTables {
  FlatTable<Key, FlowState, KeyHash<Key>> state;
  FlatTable<Key, FlowEvents, KeyHash<Key>> events{16};

  void add_to(std::vector<Flow>& out) const {
    state.for_each([&](const Key& k, const FlowState& s) {
      const FlowEvents* e = events.find(k);
      const FlowEvents none;
      const FlowEvents& ev = e ? *e : none;
      out.push_back({k.to_flow_key(),
                     FlowStats{s.packets, s.bytes, s.ecn_ce, ev.psn_gaps, ev.retransmits, ev.naks,
                               s.first_ns, s.last_ns, static_cast<std::uint16_t>(s.udp_sport)}});
    });
  }
};

// The Ethernet source MAC: present in every frame located as PFC or PAUSE.
constexpr std::size_t source_mac_offset = 6;

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

// PSNs a READ REQUEST may reserve for its response: one per packet at the smallest IB MTU,
// because the path MTU is not in the capture. Larger MTUs use fewer, so this never reports a
// gap that was not there; a loss hidden inside that window goes unseen.
constexpr std::uint32_t smallest_mtu = 256;
std::uint32_t read_response_span(std::uint32_t dma_length) {
  const std::uint64_t packets = (std::uint64_t{dma_length} + smallest_mtu - 1) / smallest_mtu;
  return static_cast<std::uint32_t>(std::clamp<std::uint64_t>(packets, 1, 0xffffff));
}

// A frame whose layers are located and, for a flow's packet, whose table slot is on its way.
struct Located {
  FrameLayout layout;
  V4Key v4;
  V6Key v6;
  std::uint64_t hash = 0;
};

// Orders flows by descending bytes, then ascending (source, destination, QP) so equal flows
// always list the same way. Sorting compact integer keys and then gathering the flows is several
// times faster than sorting the flows with byte-array comparisons, which matters at 100k+ flows.
void sort_by_bytes(std::vector<Flow>& flows) {
  struct Order {
    std::uint64_t bytes, src_hi, src_lo, dst_hi, dst_lo;
    std::uint32_t dest_qp, index;
  };
  std::vector<Order> order;
  order.reserve(flows.size());
  for (std::size_t i = 0; i < flows.size(); ++i) {
    const FlowKey& k = flows[i].key;
    order.push_back({flows[i].stats.bytes, load_be64(k.src.bytes.data()),
                     load_be64(k.src.bytes.data() + 8), load_be64(k.dst.bytes.data()),
                     load_be64(k.dst.bytes.data() + 8), k.dest_qp, static_cast<std::uint32_t>(i)});
  }
  std::sort(order.begin(), order.end(), [](const Order& x, const Order& y) {
    if (x.bytes != y.bytes) return x.bytes > y.bytes;
    return std::tie(x.src_hi, x.src_lo, x.dst_hi, x.dst_lo, x.dest_qp) <
           std::tie(y.src_hi, y.src_lo, y.dst_hi, y.dst_lo, y.dest_qp);
  });
  std::vector<Flow> sorted;
  sorted.reserve(flows.size());
  for (const Order& o : order) sorted.push_back(flows[o.index]);
  flows.swap(sorted);
}

}  // namespace

struct Analyzer::State {
  explicit State(const AnalyzerOptions& o)
      : options(o),
        bin_ns(std::max<std::uint64_t>(1, std::uint64_t{o.bin_ms} * 1'000'000)),
        pauses(o) {}

  AnalyzerOptions options;
  std::uint64_t bin_ns;
  Analysis totals;  // flows, the CNP table and the timeline live below until result()
  FlowTables<V4Key> v4_flows;
  FlowTables<V6Key> v6_flows;
  FlatTable<std::uint32_t, std::uint64_t, QpHash> cnp_by_qp{256};
  std::vector<TimelineBin> bins;
  std::uint64_t frames_outside = 0;
  PauseTracker pauses;
  bool started = false;
  std::uint64_t start_ns = 0;
  // The bin of the previous frame, [bin_lo, bin_hi): most frames fall in it and skip a division.
  std::uint64_t bin_lo = 1, bin_hi = 0;
  std::size_t bin_index = 0;

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
  void count(const Frame& f, const Located& x);
  void count_roce(const Frame& f, const Located& x);
  template <class Key>
  void count_flow_packet(FlowTables<Key>& tables, const Key& key, const Frame& f, const Located& x,
                         std::uint8_t opcode, bool ce);
  void count_pfc(const Frame& f, const FrameLayout& l);
  void count_pause(const Frame& f, const FrameLayout& l);
};

void Analyzer::State::locate(const Frame& f, Located& x) {
  x.layout = f.link_type == link_type::ethernet ? locate_layers(f.data, f.caplen) : FrameLayout{};
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

void Analyzer::State::count(const Frame& f, const Located& x) {
  Analysis& t = totals;
  if (!started) {
    started = true;
    start_ns = f.ts_ns;
    t.first_ns = t.last_ns = f.ts_ns;
  }
  ++t.frames;
  t.bytes += f.wire_len;
  t.first_ns = std::min(t.first_ns, f.ts_ns);
  t.last_ns = std::max(t.last_ns, f.ts_ns);
  if (f.link_type != link_type::ethernet) {
    ++t.non_ethernet;
    return;
  }
  const FrameLayout& l = x.layout;
  t.vlan_tagged += l.vlan_tags > 0;
  t.ipv4 += l.ip_version == 4;
  t.ipv6 += l.ip_version == 6;
  switch (l.kind) {
    case FrameKind::roce: count_roce(f, x); break;
    case FrameKind::roce_malformed: ++t.roce.malformed; break;
    case FrameKind::pfc: count_pfc(f, l); break;
    case FrameKind::pause: count_pause(f, l); break;
    case FrameKind::mac_control_malformed: ++t.pfc.malformed; break;
    case FrameKind::other: break;
  }
}

void Analyzer::State::count_roce(const Frame& f, const Located& x) {
  const std::uint8_t* bth = f.data + x.layout.bth;
  const std::uint8_t opcode = bth[0];
  const bool ce = ip_ecn(f.data, x.layout) == w::ecn_ce;
  Analysis::Roce& r = totals.roce;
  ++r.packets;
  r.bytes += f.wire_len;
  r.ecn_ce += ce;
  ++r.by_opcode[opcode];
  TimelineBin* bin = bin_for(f.ts_ns);
  if (bin) {
    bin->roce_bytes += f.wire_len;
    bin->ecn_ce += ce;
  }
  if (opcode == w::opcode::cnp) {
    if (bin) ++bin->cnp;
    ++cnp_by_qp[bth_dest_qp(bth)];
    return;
  }
  if (x.layout.ip_version == 4) {
    count_flow_packet(v4_flows, x.v4, f, x, opcode, ce);
  } else {
    count_flow_packet(v6_flows, x.v6, f, x, opcode, ce);
  }
}

template <class Key>
void Analyzer::State::count_flow_packet(FlowTables<Key>& tables, const Key& key, const Frame& f,
                                        const Located& x, std::uint8_t opcode, bool ce) {
  FlowState& s = tables.state.find_or_insert(key, x.hash);
  if (s.packets == 0) {
    s.first_ns = f.ts_ns;
    s.udp_sport = load_be16(f.data + x.layout.l4);
  }
  ++s.packets;
  s.bytes += f.wire_len;
  s.ecn_ce += ce;
  s.first_ns = std::min(s.first_ns, f.ts_ns);
  s.last_ns = std::max(s.last_ns, f.ts_ns);

  // Extended headers are read only when captured whole; RC is the transport that has them here.
  const std::uint8_t* bth = f.data + x.layout.bth;
  const std::uint32_t after_bth = f.caplen - x.layout.bth - static_cast<std::uint32_t>(w::bth_size);
  if (opcode == w::opcode::rc_acknowledge) {
    if (after_bth < w::aeth_size) return;
    const std::uint8_t syndrome = bth[w::bth_size];
    Analysis::Roce& r = totals.roce;
    if (w::aeth::is_nak(syndrome)) {
      ++tables.events[key].naks;
      ++r.naks;
    } else if (w::aeth::is_rnr_nak(syndrome)) {
      ++r.rnr_naks;
    } else if (w::aeth::is_ack(syndrome)) {
      ++r.acks;
    }
    return;
  }
  // PSNs are one sequence per flow only on connected transports (RC, UC): a UD QP hears from
  // any number of requester QPs, each with its own PSNs.
  const std::uint8_t transport = w::opcode::transport(opcode);
  if (!w::opcode::is_request(opcode) ||
      (transport != w::opcode::transport_rc && transport != w::opcode::transport_uc))
    return;

  std::uint32_t span = 1;
  if (opcode == w::opcode::rc_read_request && after_bth >= w::reth_size)
    span = read_response_span(load_be32(bth + w::bth_size + 12));
  const std::uint32_t psn = bth_psn(bth);
  if (s.highest_span != 0) {
    const std::int32_t ahead = w::psn_distance(s.highest_psn, psn);
    if (ahead <= 0) {
      ++tables.events[key].retransmits;
      return;
    }
    // `s` stays valid: growing the events table does not move the state table's slots.
    if (static_cast<std::uint32_t>(ahead) > s.highest_span) ++tables.events[key].psn_gaps;
  }
  // Both fit their 24 bits already (a PSN is 24 bits, read_response_span clamps): the masks say so.
  s.highest_psn = psn & 0xffffff;
  s.highest_span = span & 0xffffff;
}

void Analyzer::State::count_pfc(const Frame& f, const FrameLayout& l) {
  const std::uint8_t* p = f.data + l.l3;
  const std::uint16_t class_enable = load_be16(p + 2);
  ++totals.pfc.frames;
  bool any_xoff = false;
  for (std::size_t prio = 0; prio < 8; ++prio) {
    if (!(class_enable & (1u << prio))) continue;
    PfcPriority& x = totals.pfc.priorities[prio];
    const std::uint16_t quanta = load_be16(p + 4 + 2 * prio);
    ++x.frames;
    x.xoff += quanta > 0;
    x.xon += quanta == 0;
    x.quanta += quanta;
    any_xoff |= quanta > 0;
  }
  pauses.pfc(f.ts_ns, f.data + source_mac_offset, class_enable, p + 4);
  TimelineBin* bin = bin_for(f.ts_ns);
  if (bin && any_xoff) ++bin->pfc_xoff;
}

void Analyzer::State::count_pause(const Frame& f, const FrameLayout& l) {
  const std::uint16_t quanta = load_be16(f.data + l.l3 + 2);
  ++totals.pause_8023x.frames;
  totals.pause_8023x.xoff += quanta > 0;
  totals.pause_8023x.quanta += quanta;
  pauses.pause(f.ts_ns, f.data + source_mac_offset, quanta);
}

Analyzer::Analyzer(const AnalyzerOptions& options) : state_(std::make_unique<State>(options)) {}
Analyzer::~Analyzer() = default;

void Analyzer::set_window_end(std::uint64_t ns) noexcept {
  state_->options.window_end_ns = ns;
}

void Analyzer::add(std::span<const Frame> frames) {
  State& st = *state_;
  for (std::size_t base = 0; base < frames.size(); base += State::lookahead) {
    const std::size_t n = std::min(State::lookahead, frames.size() - base);
    for (std::size_t i = 0; i < n; ++i) st.locate(frames[base + i], st.located[i]);
    for (std::size_t i = 0; i < n; ++i) st.count(frames[base + i], st.located[i]);
  }
}

Analysis Analyzer::result() const {
  const State& st = *state_;
  Analysis a = st.totals;
  a.options = st.options;

  std::tie(a.window_start_ns, a.window_end_ns) = observation_window(a, st.options);
  const double window_ns = static_cast<double>(a.window_end_ns - a.window_start_ns);
  const auto fraction = [&](double paused_ns) { return window_ns > 0 ? paused_ns / window_ns : 0; };
  PauseTracker::Totals pauses = st.pauses.totals(a.window_start_ns, a.window_end_ns);
  for (std::size_t i = 0; i < a.pfc.priorities.size(); ++i) {
    PfcPriority& p = a.pfc.priorities[i];
    const PauseTracker::ClassTotals& c = pauses.classes[i];
    p.pause_ns = pause_quanta_to_ns(p.quanta, st.options.link_gbps);
    p.paused_ns = c.paused_ns;
    p.longest_pause_ns = c.longest_pause_ns;
    p.pause_fraction = fraction(c.paused_ns);
    p.storms = c.storms;
  }
  Analysis::Pause& pause = a.pause_8023x;
  const PauseTracker::ClassTotals& c = pauses.classes[PauseTracker::pause_8023x];
  pause.pause_ns = pause_quanta_to_ns(pause.quanta, st.options.link_gbps);
  pause.paused_ns = c.paused_ns;
  pause.longest_pause_ns = c.longest_pause_ns;
  pause.pause_fraction = fraction(c.paused_ns);
  pause.storms = c.storms;
  a.pfc.storms = std::move(pauses.storms);
  a.pfc.direction_known =
      st.options.direction != MirrorDirection::unknown || !st.options.spine_macs.empty();
  a.pfc.from_spine = pauses.from_spine;

  a.cnp.by_dest_qp.reserve(st.cnp_by_qp.size());
  st.cnp_by_qp.for_each([&](std::uint32_t qp, std::uint64_t n) {
    a.cnp.by_dest_qp.emplace_back(qp, n);
    a.cnp.count += n;
  });
  std::sort(a.cnp.by_dest_qp.begin(), a.cnp.by_dest_qp.end());

  a.flows.reserve(st.v4_flows.state.size() + st.v6_flows.state.size());
  st.v4_flows.add_to(a.flows);
  st.v6_flows.add_to(a.flows);
  sort_by_bytes(a.flows);

  a.timeline.bin_ms = st.options.bin_ms;
  a.timeline.start_ns = st.start_ns;
  a.timeline.bins = st.bins;
  a.timeline.frames_outside = st.frames_outside;
  return a;
}

}  // namespace rocehil::capture
