#include "rocehil/capture/analyzer.hpp"

#include <algorithm>
#include <cstring>
#include <tuple>

#include "flat_table.hpp"
#include "rocehil/common/roce_wire.hpp"
#include "rocehil/common/units.hpp"

namespace rocehil::capture {

namespace w = rocehil::wire;

namespace {

struct FlowKeyHash {
  std::uint64_t operator()(const FlowKey& k) const noexcept {
    std::uint64_t words[4];
    std::memcpy(words, k.src.bytes.data(), 16);
    std::memcpy(words + 2, k.dst.bytes.data(), 16);
    std::uint64_t h = mix64(k.dest_qp ^ 0x9e3779b97f4a7c15ull);
    for (std::uint64_t word : words) h = mix64(h ^ word);
    return h;
  }
};

struct QpHash {
  std::uint64_t operator()(std::uint32_t qp) const noexcept { return mix64(qp); }
};

// What a flow keeps between packets, beyond what it reports.
struct FlowState {
  FlowStats stats;
  bool seen_request = false;
  std::uint32_t highest_psn = 0;
  // PSNs the request at highest_psn occupies: 1, or a READ REQUEST's response packets.
  std::uint32_t highest_span = 1;
};

// PSNs a READ REQUEST may reserve for its response: one per packet at the smallest IB MTU,
// because the path MTU is not in the capture. Larger MTUs use fewer, so this never reports a
// gap that was not there; a loss hidden inside that window goes unseen.
constexpr std::uint32_t smallest_mtu = 256;
std::uint32_t read_response_span(std::uint32_t dma_length) {
  return std::max<std::uint32_t>(1, (dma_length + smallest_mtu - 1) / smallest_mtu);
}

}  // namespace

struct Analyzer::State {
  explicit State(const AnalyzerOptions& o)
      : options(o), bin_ns(std::uint64_t{o.bin_ms} * 1'000'000) {
    if (bin_ns == 0) bin_ns = 1'000'000;
  }

  AnalyzerOptions options;
  std::uint64_t bin_ns;
  Analysis totals;  // flows, CNP table and timeline live below until result()
  FlatTable<FlowKey, FlowState, FlowKeyHash> flows;
  FlatTable<std::uint32_t, std::uint64_t, QpHash> cnp_by_qp;
  std::vector<TimelineBin> bins;
  std::uint64_t frames_outside = 0;
  bool started = false;
  std::uint64_t start_ns = 0;
  DecodedFrame decoded;  // reused: decoding writes every field

  TimelineBin* bin_for(std::uint64_t ts) {
    const std::uint64_t index = ts <= start_ns ? 0 : (ts - start_ns) / bin_ns;
    if (index >= options.max_bins) {
      ++frames_outside;
      return nullptr;
    }
    if (index >= bins.size()) bins.resize(static_cast<std::size_t>(index) + 1);
    return &bins[static_cast<std::size_t>(index)];
  }

  void add_roce(const Frame& f, TimelineBin* bin);
  void add_pfc(TimelineBin* bin);
  void add_pause();
};

void Analyzer::State::add_roce(const Frame& f, TimelineBin* bin) {
  const DecodedFrame& d = decoded;
  Analysis::Roce& r = totals.roce;
  const bool ce = d.ecn == w::ecn_ce;
  ++r.packets;
  r.bytes += f.wire_len;
  r.ecn_ce += ce;
  ++r.by_opcode[d.bth.opcode];
  if (bin) {
    bin->roce_bytes += f.wire_len;
    bin->ecn_ce += ce;
  }
  if (d.bth.opcode == w::opcode::cnp) {
    if (bin) ++bin->cnp;
    ++cnp_by_qp[d.bth.dest_qp];
    return;
  }

  FlowState& flow = flows[FlowKey{d.src, d.dst, d.bth.dest_qp}];
  FlowStats& s = flow.stats;
  if (s.packets == 0) s.first_ns = f.ts_ns;
  ++s.packets;
  s.bytes += f.wire_len;
  s.ecn_ce += ce;
  s.first_ns = std::min(s.first_ns, f.ts_ns);
  s.last_ns = std::max(s.last_ns, f.ts_ns);

  if (d.has_aeth && d.bth.opcode == w::opcode::rc_acknowledge) {
    const std::uint8_t syndrome = d.aeth.syndrome;
    if (w::aeth::is_nak(syndrome)) {
      ++s.naks;
      ++r.naks;
    } else if (w::aeth::is_rnr_nak(syndrome)) {
      ++r.rnr_naks;
    } else if (w::aeth::is_ack(syndrome)) {
      ++r.acks;
    }
    return;
  }
  if (!w::opcode::is_request(d.bth.opcode)) return;

  const bool read = w::opcode::operation(d.bth.opcode) == w::opcode::rc_read_request;
  const std::uint32_t span = read && d.has_reth ? read_response_span(d.reth.dma_length) : 1;
  if (!flow.seen_request) {
    flow.seen_request = true;
  } else {
    const std::int32_t ahead = w::psn_distance(flow.highest_psn, d.bth.psn);
    if (ahead <= 0) {
      ++s.retransmits;
      return;
    }
    if (static_cast<std::uint32_t>(ahead) > flow.highest_span) ++s.psn_gaps;
  }
  flow.highest_psn = d.bth.psn;
  flow.highest_span = span;
}

void Analyzer::State::add_pfc(TimelineBin* bin) {
  const DecodedFrame& d = decoded;
  ++totals.pfc.frames;
  bool any_xoff = false;
  for (std::size_t p = 0; p < 8; ++p) {
    if (!(d.pfc_class_enable & (1u << p))) continue;
    PfcPriority& prio = totals.pfc.priorities[p];
    const std::uint16_t q = d.pfc_quanta[p];
    ++prio.frames;
    if (q > 0) {
      ++prio.xoff;
      any_xoff = true;
    } else {
      ++prio.xon;
    }
    prio.quanta += q;
  }
  if (bin && any_xoff) ++bin->pfc_xoff;
}

void Analyzer::State::add_pause() {
  ++totals.pause_8023x.frames;
  totals.pause_8023x.xoff += decoded.pause_quanta > 0;
  totals.pause_8023x.quanta += decoded.pause_quanta;
}

Analyzer::Analyzer(const AnalyzerOptions& options) : state_(std::make_unique<State>(options)) {}
Analyzer::~Analyzer() = default;

void Analyzer::add(const Frame& f) {
  State& st = *state_;
  Analysis& t = st.totals;
  if (!st.started) {
    st.started = true;
    st.start_ns = f.ts_ns;
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

  decode_ethernet(f.data, f.caplen, st.decoded);
  const DecodedFrame& d = st.decoded;
  t.vlan_tagged += d.vlan_tags > 0;
  t.ipv4 += d.ip_version == 4;
  t.ipv6 += d.ip_version == 6;
  switch (d.kind) {
    case FrameKind::roce: st.add_roce(f, st.bin_for(f.ts_ns)); break;
    case FrameKind::roce_malformed: ++t.roce.malformed; break;
    case FrameKind::pfc: st.add_pfc(st.bin_for(f.ts_ns)); break;
    case FrameKind::pause: st.add_pause(); break;
    case FrameKind::mac_control_malformed: ++t.pfc.malformed; break;
    case FrameKind::other: break;
  }
}

Analysis Analyzer::result() const {
  const State& st = *state_;
  Analysis a = st.totals;
  a.options = st.options;

  for (PfcPriority& p : a.pfc.priorities)
    p.pause_ns = pause_quanta_to_ns(p.quanta, st.options.link_gbps);
  a.pause_8023x.pause_ns = pause_quanta_to_ns(a.pause_8023x.quanta, st.options.link_gbps);

  a.cnp.by_dest_qp.reserve(st.cnp_by_qp.size());
  st.cnp_by_qp.for_each([&](std::uint32_t qp, std::uint64_t n) {
    a.cnp.by_dest_qp.emplace_back(qp, n);
    a.cnp.count += n;
  });
  std::sort(a.cnp.by_dest_qp.begin(), a.cnp.by_dest_qp.end());

  a.flows.reserve(st.flows.size());
  st.flows.for_each([&](const FlowKey& k, const FlowState& s) { a.flows.push_back({k, s.stats}); });
  std::sort(a.flows.begin(), a.flows.end(), [](const Flow& x, const Flow& y) {
    if (x.stats.bytes != y.stats.bytes) return x.stats.bytes > y.stats.bytes;
    return std::tie(x.key.src.bytes, x.key.dst.bytes, x.key.dest_qp) <
           std::tie(y.key.src.bytes, y.key.dst.bytes, y.key.dest_qp);
  });

  a.timeline.bin_ms = st.options.bin_ms;
  a.timeline.start_ns = st.start_ns;
  a.timeline.bins = st.bins;
  a.timeline.frames_outside = st.frames_outside;
  return a;
}

}  // namespace rocehil::capture
