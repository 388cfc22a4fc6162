// rocehil-synth-capture: writes a synthetic mirror-port capture of RoCEv2 traffic (data, ACKs,
// NAKs, CNPs, PFC and PAUSE) plus, optionally, the generator's own ground truth, so that
// `rocehil analyze` can be benchmarked on realistic input and checked against counts that do
// not come from any decoder.

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <vector>

#include "rocehil/capture/decode.hpp"
#include "rocehil/capture/file_source.hpp"
#include "rocehil/capture/frame_builder.hpp"
#include "rocehil/capture/mirror_builder.hpp"
#include "rocehil/capture/pcap_writer.hpp"
#include "rocehil/common/byte_order.hpp"
#include "rocehil/common/error.hpp"
#include "rocehil/common/roce_wire.hpp"

namespace {

namespace cap = rocehil::capture;
namespace w = rocehil::wire;
using rocehil::load_be16;
using rocehil::store_be16;
using rocehil::store_be32;

constexpr std::uint32_t psn_mask = 0xffffff;
constexpr std::uint32_t mtu = 4096;
// The largest number of QPs: receiver and sender QPNs get disjoint halves of the 24-bit space.
constexpr std::uint32_t max_qps = 1u << 22;
// 198.18.0.0/15 minus its first and last address.
constexpr std::uint32_t max_hosts = (1u << 17) - 2;
// Every header a frame can carry (one tag, IPv6, UDP, BTH, RETH) fits in this many bytes, so a
// snap length at least this long keeps every count in the truth file visible to a decoder.
constexpr std::uint32_t min_snaplen = 96;
// 2026-11-22T00:00:00Z: a fixed start keeps the output byte-identical for one seed.
constexpr std::uint64_t start_ns = 1'795'305'600ull * 1'000'000'000ull;
// Preamble + SFD (8), FCS (4) and inter-frame gap (12): link time a frame takes beyond its bytes.
constexpr std::uint32_t wire_overhead = 24;
// ConnectX MIN_TIME_BETWEEN_CNPS default: one CNP per QP per 2 us at most.
constexpr std::uint64_t min_ns_between_cnps = 2'000;
constexpr std::uint16_t pfc_priority = 3;    // the lossless class RoCE data rides
constexpr std::uint8_t ack_syndrome = 0x1f;  // ACK, credit count "invalid" (no end-to-end credit)

struct Options {
  std::string out;
  std::uint64_t frames = 2'000'000;
  std::uint32_t qps = 4096;
  std::uint32_t hosts = 64;
  std::uint32_t snaplen = 128;
  std::uint32_t payload = 4096;
  double ce_percent = 1.0;
  std::uint32_t ack_every = 16;
  double loss_per_million = 0;
  double pfc_per_million = 100;
  double pause_per_million = 5;
  double ipv6_percent = 0;
  int vlan = -1;
  std::string format = "pcap";
  std::uint64_t seed = 1;
  double rate_gbps = 100;
  std::string truth;
  std::string wrap = "none";  // none, erspan2, erspan3, gre: as a remote mirror session sends
};

// xoshiro256** seeded by splitmix64: the same stream on every platform and standard library,
// which std::uniform_*_distribution does not promise.
class Rng {
 public:
  explicit Rng(std::uint64_t seed) {
    for (auto& s : s_) {
      seed += 0x9e3779b97f4a7c15ull;
      std::uint64_t z = seed;
      z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
      z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
      s = z ^ (z >> 31);
    }
  }
  std::uint64_t next() noexcept {
    const std::uint64_t result = rotl(s_[1] * 5, 7) * 9;
    const std::uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }
  // Modulo bias is below 2^-40 for the bounds used here.
  std::uint64_t below(std::uint64_t n) noexcept { return next() % n; }
  // True with probability p (0..1); the threshold is precomputed by the caller.
  bool hit(std::uint64_t threshold) noexcept { return next() < threshold; }
  static std::uint64_t threshold(double p) noexcept {
    if (p <= 0) return 0;
    if (p >= 1) return UINT64_MAX;
    return static_cast<std::uint64_t>(p * 18446744073709551616.0);
  }

 private:
  static std::uint64_t rotl(std::uint64_t x, int k) noexcept { return (x << k) | (x >> (64 - k)); }
  std::array<std::uint64_t, 4> s_{};
};

// One RC connection seen on the mirror: the requester sends RDMA WRITEs to the responder's QP,
// the responder answers with ACKs, NAKs and CNPs to the requester's QP.
struct Flow {
  std::uint32_t src_host = 0;  // requester
  std::uint32_t dst_host = 0;  // responder
  std::uint32_t start_psn = 0;
  std::uint32_t next_psn = 0;      // requester: the next PSN it transmits
  std::uint32_t expected_psn = 0;  // responder: the next PSN it accepts in order
  std::uint32_t highest_psn = 0;   // highest request PSN on the mirror (what a decoder sees)
  std::uint64_t last_cnp_ns = 0;
  std::uint16_t udp_port = 0;
  std::uint8_t msg_shift = 0;  // messages are 2^msg_shift packets
  std::uint8_t since_ack = 0;
  std::uint8_t in_flight_after_nak = 0;  // packets the requester sends before the NAK reaches it
  bool v6 = false;
  bool seen_request = false;
  bool cnp_sent = false;
  bool nak_outstanding = false;  // responder NAKed and drops out-of-order packets until p
  bool go_back = false;          // requester will resend from expected_psn
};

// Ground truth counted per flow as frames are written.
struct FlowTruth {
  std::uint64_t packets = 0, bytes = 0, ecn_ce = 0, psn_gaps = 0, retransmits = 0;
  std::uint64_t ack_packets = 0, ack_bytes = 0, naks = 0, cnps = 0;
};

struct Truth {
  std::uint64_t frames = 0, bytes = 0, vlan_tagged = 0, ipv4 = 0, ipv6 = 0;
  std::uint64_t first_ns = 0, last_ns = 0;
  std::uint64_t roce_packets = 0, roce_bytes = 0, ecn_ce = 0, acks = 0, naks = 0;
  std::uint64_t lost = 0;
  std::array<std::uint64_t, 256> by_opcode{};
  struct Pfc {
    std::uint64_t frames = 0, xoff = 0, xon = 0, quanta = 0;
  };
  std::uint64_t pfc_frames = 0;
  std::array<Pfc, 8> pfc{};
  std::uint64_t pause_frames = 0, pause_xoff = 0, pause_quanta = 0;
  std::vector<FlowTruth> flows;
};

cap::FileFormat parse_format(const std::string& s) {
  if (s == "pcap") return cap::FileFormat::pcap_us;
  if (s == "pcap-ns") return cap::FileFormat::pcap_ns;
  return cap::FileFormat::pcapng;
}

std::uint16_t ipv4_checksum(const std::uint8_t* h) noexcept {
  std::uint32_t sum = 0;
  for (int i = 0; i < 20; i += 2) sum += load_be16(h + i);
  while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
  return static_cast<std::uint16_t>(~sum);
}

cap::MirrorWrap mirror_for(const std::string& wrap) {
  cap::MirrorWrap m;
  m.kind = wrap == "erspan3" ? cap::MirrorKind::erspan3
           : wrap == "gre"   ? cap::MirrorKind::gre_teb
                             : cap::MirrorKind::erspan2;
  m.granularity = cap::TimestampGranularity::ns100;
  m.session_id = 1;
  m.with_key = wrap == "gre";
  m.key = 1;
  return m;
}

class Generator {
 public:
  explicit Generator(const Options& o)
      : o_(o),
        rng_(o.seed),
        writer_(o.out, parse_format(o.format),
                o.snaplen == 0 ? 262144 : o.snaplen + (o.wrap == "none" ? 0 : 104)),
        us_timestamps_(o.format == "pcap"),
        ps_per_byte_(8000.0 / o.rate_gbps),
        ce_(Rng::threshold(o.ce_percent / 100)),
        loss_(Rng::threshold(o.loss_per_million / 1e6)),
        pfc_(Rng::threshold(o.pfc_per_million / 1e6)),
        pause_(Rng::threshold(o.pause_per_million / 1e6)),
        buf_(16384) {
    make_hosts();
    make_flows();
    make_templates();
    truth_.flows.resize(flows_.size());
  }

  void run() {
    while (truth_.frames < o_.frames) {
      const std::uint64_t left = o_.frames - truth_.frames;
      // Near the end, send the pending XON and resume frames so every pause in the file ends.
      const std::size_t due = earliest_resume();
      if (due < resumes_.size() && (resumes_[due].due_ps <= ps_ || left <= resumes_.size() + 3)) {
        send_resume(due);
        continue;
      }
      const bool room = left > resumes_.size() + 3;
      if (room && rng_.hit(pfc_)) {
        send_pause_start(true);
        continue;
      }
      if (room && rng_.hit(pause_)) {
        send_pause_start(false);
        continue;
      }
      send_data(static_cast<std::uint32_t>(rng_.below(flows_.size())));
    }
    writer_.close();
  }

  nlohmann::json truth_json() const;
  std::uint64_t frames() const { return truth_.frames; }

 private:
  struct Resume {
    std::uint64_t due_ps;
    bool pfc;
  };

  void make_hosts() {
    hosts_v4_.reserve(o_.hosts);
    hosts_v6_.reserve(o_.hosts);
    for (std::uint32_t i = 0; i < o_.hosts; ++i) {
      const std::uint32_t a = (198u << 24 | 18u << 16) + i + 1;
      std::array<std::uint8_t, 4> v4{};
      store_be32(v4.data(), a);
      hosts_v4_.push_back(cap::IpAddress::v4(v4.data()));
      // IPv6 hosts live in 2001:2::/48 (RFC 5180, the IPv6 benchmarking range) with the host's
      // IPv4 address in the low 32 bits, so a person can match the two families by eye.
      std::array<std::uint8_t, 16> v6{0x20, 0x01, 0x00, 0x02};
      store_be32(v6.data() + 12, a);
      hosts_v6_.push_back(cap::IpAddress::v6(v6.data()));
    }
  }

  void make_flows() {
    const std::uint64_t v6 = Rng::threshold(o_.ipv6_percent / 100);
    flows_.resize(o_.qps);
    for (std::uint32_t i = 0; i < o_.qps; ++i) {
      Flow& f = flows_[i];
      f.src_host = static_cast<std::uint32_t>(rng_.below(o_.hosts));
      f.dst_host = static_cast<std::uint32_t>(rng_.below(o_.hosts - 1));
      if (f.dst_host >= f.src_host) ++f.dst_host;
      f.v6 = rng_.hit(v6);
      // NICs pick one UDP source port per QP from the ephemeral range so ECMP spreads QPs.
      f.udp_port = static_cast<std::uint16_t>(49152 + rng_.below(16384));
      f.msg_shift = static_cast<std::uint8_t>(rng_.below(5));
      // Random start PSNs, as NICs choose them, so some flows wrap the 24-bit PSN space.
      f.start_psn = f.next_psn = f.expected_psn =
          static_cast<std::uint32_t>(rng_.next()) & psn_mask;
    }
  }

  // QPNs: responders in [0x100, 0x100 + qps), requesters in [0x800100, ...): no ACK flow
  // (responder -> requester QP) can share a key with a data flow.
  static std::uint32_t responder_qp(std::uint32_t i) { return 0x000100 + i; }
  static std::uint32_t requester_qp(std::uint32_t i) { return 0x800100 + i; }

  std::uint16_t tci(std::uint16_t pcp) const {
    return static_cast<std::uint16_t>(pcp << 13 | (o_.vlan & 0x0fff));
  }

  void make_templates() {
    if (o_.vlan >= 0) {
      data_.vlans = {{w::ethertype::vlan, tci(pfc_priority)}};
      ack_.vlans = data_.vlans;
      cnp_ = cap::cnp_frame(hosts_v4_[0], hosts_v4_[1], 0);
      cnp_.vlans = {{w::ethertype::vlan, tci(6)}};  // CNP_802P_PRIO 6
    } else {
      cnp_ = cap::cnp_frame(hosts_v4_[0], hosts_v4_[1], 0);
    }
    data_.payload_size = o_.payload;
    data_.reth.rkey = 0x2b7e1516;
    ack_.bth.opcode = w::opcode::rc_acknowledge;
    ack_.payload_size = 0;

    auto tag = [&](std::vector<std::uint8_t> f) {
      // A mirror session that tags its copies (RSPAN) tags MAC control frames too.
      if (o_.vlan >= 0) {
        std::array<std::uint8_t, 4> t{};
        store_be16(t.data(), w::ethertype::vlan);
        store_be16(t.data() + 2, tci(7));
        f.insert(f.begin() + 12, t.begin(), t.end());
      }
      return f;
    };
    std::array<std::uint16_t, 8> quanta{};
    quanta[pfc_priority] = 0xffff;
    pfc_xoff_ = tag(cap::build_pfc(1u << pfc_priority, quanta));
    quanta[pfc_priority] = 0;
    pfc_xon_ = tag(cap::build_pfc(1u << pfc_priority, quanta));
    pause_xoff_ = tag(cap::build_pause(0xffff));
    pause_xon_ = tag(cap::build_pause(0));
  }

  std::uint64_t now_ns() const { return start_ns + ps_ / 1000; }

  // Writes one record and advances the clock by the frame's time on the link.
  void write(std::span<const std::uint8_t> bytes, std::uint32_t wire_len, bool tagged) {
    const std::uint64_t ts = now_ns();
    if (o_.wrap == "none") {
      writer_.write(ts, bytes, wire_len);
    } else {
      write_wrapped(ts, bytes, wire_len);
    }
    const std::uint64_t stored = us_timestamps_ ? ts / 1000 * 1000 : ts;
    if (truth_.frames == 0) truth_.first_ns = stored;
    truth_.last_ns = stored;
    ++truth_.frames;
    truth_.bytes += wire_len;
    truth_.vlan_tagged += tagged;
    ps_ += static_cast<std::uint64_t>(std::llround((wire_len + wire_overhead) * ps_per_byte_));
  }

  // The frame as a switch's mirror session sends it: in GRE (ERSPAN II, ERSPAN III with its
  // 100 ns timestamp, or TEB), the outer IP length saying the whole frame was carried.
  void write_wrapped(std::uint64_t ts, std::span<const std::uint8_t> bytes,
                     std::uint32_t wire_len) {
    mirror_.sequence = sequence_++;
    mirror_.timestamp = static_cast<std::uint32_t>(ts / 100);
    const std::size_t n = cap::wrap_mirror(mirror_, bytes, wrapped_);
    const auto overhead = static_cast<std::uint32_t>(n - bytes.size());
    std::uint8_t* ip = wrapped_.data() + w::ethernet_header_size;
    store_be16(ip + 2, static_cast<std::uint16_t>(overhead - w::ethernet_header_size + wire_len));
    store_be16(ip + 10, 0);
    store_be16(ip + 10, ipv4_checksum(ip));
    writer_.write(ts, std::span<const std::uint8_t>(wrapped_.data(), n), overhead + wire_len);
  }

  // Builds a RoCE frame and writes it. When the snap length cuts the frame before its ICRC, the
  // payload is built short (the bytes kept are the same) and the IP and UDP lengths are set to the
  // full frame's, so a 4 KB payload costs a 128-byte build and a 110-byte CRC, not a 4 KB one.
  std::uint32_t write_roce(cap::RoceFrame& f) {
    const std::uint32_t payload = f.payload_size;
    const auto full = static_cast<std::uint32_t>(cap::frame_size(f));
    const bool cut = o_.snaplen != 0 && full > o_.snaplen + w::icrc_size;
    if (cut)
      f.payload_size = payload - (full - o_.snaplen - static_cast<std::uint32_t>(w::icrc_size));
    const std::size_t built = cap::build(f, buf_);
    f.payload_size = payload;
    if (cut) {
      std::uint8_t* ip = buf_.data() + w::ethernet_header_size + f.vlans.size() * w::vlan_tag_size;
      const auto ip_len = static_cast<std::uint32_t>(full - (ip - buf_.data()));
      std::uint8_t* udp;
      if (f.src.is_v4()) {
        store_be16(ip + 2, static_cast<std::uint16_t>(ip_len));
        store_be16(ip + 10, 0);
        store_be16(ip + 10, ipv4_checksum(ip));
        udp = ip + 20;
      } else {
        store_be16(ip + 4, static_cast<std::uint16_t>(ip_len - 40));
        udp = ip + 40;
      }
      store_be16(udp + 4, static_cast<std::uint16_t>(full - (udp - buf_.data())));
    }
    write(std::span(buf_.data(), built), full, !f.vlans.empty());
    ++truth_.roce_packets;
    truth_.roce_bytes += full;
    ++truth_.by_opcode[f.bth.opcode];
    if (f.src.is_v4())
      ++truth_.ipv4;
    else
      ++truth_.ipv6;
    return full;
  }

  void address(cap::RoceFrame& f, const Flow& fl, bool reverse) {
    const auto& hosts = fl.v6 ? hosts_v6_ : hosts_v4_;
    const std::uint32_t a = reverse ? fl.dst_host : fl.src_host;
    const std::uint32_t b = reverse ? fl.src_host : fl.dst_host;
    f.src = hosts[a];
    f.dst = hosts[b];
    f.src_mac = host_mac(a);
    f.dst_mac = host_mac(b);
  }

  static cap::MacAddress host_mac(std::uint32_t h) {
    return {0x02,
            0x00,
            0x00,
            static_cast<std::uint8_t>(h >> 16),
            static_cast<std::uint8_t>(h >> 8),
            static_cast<std::uint8_t>(h)};
  }

  bool full() const { return truth_.frames >= o_.frames; }

  void send_data(std::uint32_t i) {
    Flow& fl = flows_[i];
    FlowTruth& t = truth_.flows[i];
    if (fl.go_back && fl.in_flight_after_nak == 0) {
      // Go-back-N: the NAK arrived; resend everything from the PSN the responder expects.
      fl.go_back = false;
      fl.next_psn = fl.expected_psn;
    }
    const std::uint32_t psn = fl.next_psn;
    fl.next_psn = (psn + 1) & psn_mask;
    if (fl.go_back) --fl.in_flight_after_nak;

    // Lost upstream of the mirror: the mirror never sees it. Only a flow in order loses packets,
    // which keeps recovery a single NAK and one go-back, as a NIC's is.
    const bool in_order = !fl.go_back && !fl.nak_outstanding && psn == fl.expected_psn;
    if (in_order && rng_.hit(loss_)) {
      ++truth_.lost;
      return;
    }

    const std::uint32_t msg_packets = 1u << fl.msg_shift;
    const std::uint32_t pos = ((psn - fl.start_psn) & psn_mask) & (msg_packets - 1);
    std::uint8_t op;
    if (msg_packets == 1)
      op = w::opcode::rc_write_only;
    else if (pos == 0)
      op = w::opcode::rc_write_first;
    else if (pos == msg_packets - 1)
      op = w::opcode::rc_write_last;
    else
      op = w::opcode::rc_write_middle;
    const bool ce = rng_.hit(ce_);

    address(data_, fl, false);
    data_.udp_src_port = fl.udp_port;
    data_.ecn = ce ? w::ecn_ce : 0b10;
    data_.bth.opcode = op;
    data_.bth.dest_qp = responder_qp(i);
    data_.bth.psn = psn;
    data_.bth.ack_req = op == w::opcode::rc_write_only || op == w::opcode::rc_write_last;
    const std::uint32_t msg = ((psn - fl.start_psn) & psn_mask) >> fl.msg_shift;
    data_.reth.va = 0x7f0000000000ull + std::uint64_t{i} * 0x100000 +
                    std::uint64_t{msg % 16} * msg_packets * o_.payload;
    data_.reth.dma_length = msg_packets * o_.payload;
    const std::uint32_t len = write_roce(data_);

    ++t.packets;
    t.bytes += len;
    t.ecn_ce += ce;
    truth_.ecn_ce += ce;
    // What a decoder that follows analysis.hpp's PSN definitions must report for this flow.
    if (!fl.seen_request) {
      fl.seen_request = true;
      fl.highest_psn = psn;
    } else {
      const std::int32_t ahead = w::psn_distance(fl.highest_psn, psn);
      if (ahead <= 0) {
        ++t.retransmits;
      } else {
        if (ahead > 1) ++t.psn_gaps;
        fl.highest_psn = psn;
      }
    }

    // The responder: a CE mark asks for a CNP (at most one per QP per 2 us), an in-order packet
    // is accepted and acknowledged every ack_every packets, the first out-of-order one is NAKed.
    if (ce && (!fl.cnp_sent || now_ns() - fl.last_cnp_ns >= min_ns_between_cnps) && !full()) {
      fl.cnp_sent = true;
      fl.last_cnp_ns = now_ns();
      address(cnp_, fl, true);
      cnp_.udp_src_port = fl.udp_port;
      cnp_.bth.dest_qp = requester_qp(i);
      write_roce(cnp_);
      ++t.cnps;
    }
    const std::int32_t ahead = w::psn_distance(fl.expected_psn, psn);
    if (ahead == 0) {
      fl.expected_psn = (psn + 1) & psn_mask;
      fl.nak_outstanding = false;
      if (++fl.since_ack >= o_.ack_every) {
        fl.since_ack = 0;
        send_ack(i, psn, ack_syndrome);
      }
    } else if (ahead > 0 && !fl.nak_outstanding) {
      fl.nak_outstanding = true;
      fl.go_back = true;
      fl.in_flight_after_nak = static_cast<std::uint8_t>(rng_.below(4));
      send_ack(i, fl.expected_psn, w::aeth::nak_psn_sequence_error);
    }
  }

  void send_ack(std::uint32_t i, std::uint32_t psn, std::uint8_t syndrome) {
    if (full()) return;
    const Flow& fl = flows_[i];
    FlowTruth& t = truth_.flows[i];
    address(ack_, fl, true);
    ack_.udp_src_port = fl.udp_port;
    ack_.bth.dest_qp = requester_qp(i);
    ack_.bth.psn = psn;
    ack_.aeth.syndrome = syndrome;
    ack_.aeth.msn = (((fl.expected_psn - fl.start_psn) & psn_mask) >> fl.msg_shift) & psn_mask;
    const std::uint32_t len = write_roce(ack_);
    ++t.ack_packets;
    t.ack_bytes += len;
    if (w::aeth::is_nak(syndrome)) {
      ++t.naks;
      ++truth_.naks;
    } else {
      ++truth_.acks;
    }
  }

  // XOFF on priority 3 (or an 802.3x PAUSE) with the largest quanta; the matching XON follows
  // 5-300 us later. An XOFF while one is in force refreshes it, as a congested switch does.
  void send_pause_start(bool pfc) {
    const auto& frame = pfc ? pfc_xoff_ : pause_xoff_;
    write(frame, static_cast<std::uint32_t>(frame.size()), o_.vlan >= 0);
    count_mac_control(pfc, 0xffff);
    for (const Resume& r : resumes_)
      if (r.pfc == pfc) return;
    const std::uint64_t delay_ps = (5 + rng_.below(296)) * 1'000'000;
    resumes_.push_back({ps_ + delay_ps, pfc});
  }

  // resumes_ holds at most one PFC and one PAUSE resume: a scan is cheapest.
  std::size_t earliest_resume() const {
    std::size_t first = resumes_.size();
    for (std::size_t k = 0; k < resumes_.size(); ++k)
      if (first == resumes_.size() || resumes_[k].due_ps < resumes_[first].due_ps) first = k;
    return first;
  }

  void send_resume(std::size_t k) {
    const bool pfc = resumes_[k].pfc;
    resumes_.erase(resumes_.begin() + static_cast<std::ptrdiff_t>(k));
    const auto& frame = pfc ? pfc_xon_ : pause_xon_;
    write(frame, static_cast<std::uint32_t>(frame.size()), o_.vlan >= 0);
    count_mac_control(pfc, 0);
  }

  void count_mac_control(bool pfc, std::uint16_t quanta) {
    if (pfc) {
      ++truth_.pfc_frames;
      Truth::Pfc& p = truth_.pfc[pfc_priority];
      ++p.frames;
      p.xoff += quanta > 0;
      p.xon += quanta == 0;
      p.quanta += quanta;
    } else {
      ++truth_.pause_frames;
      truth_.pause_xoff += quanta > 0;
      truth_.pause_quanta += quanta;
    }
  }

  const Options& o_;
  Rng rng_;
  cap::PcapWriter writer_;
  cap::MirrorWrap mirror_ = mirror_for(o_.wrap);
  std::uint32_t sequence_ = 0;
  std::vector<std::uint8_t> wrapped_ = std::vector<std::uint8_t>(16384 + 256);
  bool us_timestamps_;
  double ps_per_byte_;
  std::uint64_t ps_ = 0;  // link clock in picoseconds since start_ns
  std::uint64_t ce_, loss_, pfc_, pause_;
  std::vector<std::uint8_t> buf_;
  std::vector<cap::IpAddress> hosts_v4_, hosts_v6_;
  std::vector<Flow> flows_;
  cap::RoceFrame data_, ack_, cnp_;
  std::vector<std::uint8_t> pfc_xoff_, pfc_xon_, pause_xoff_, pause_xon_;
  std::vector<Resume> resumes_;
  Truth truth_;

  // One flow's line in the truth file: the data direction, or the ACK/NAK direction (`ack`).
  nlohmann::json flow_json(std::uint32_t i, bool ack) const {
    const Flow& fl = flows_[i];
    const FlowTruth& t = truth_.flows[i];
    const auto& hosts = fl.v6 ? hosts_v6_ : hosts_v4_;
    const auto& src = hosts[ack ? fl.dst_host : fl.src_host];
    const auto& dst = hosts[ack ? fl.src_host : fl.dst_host];
    if (ack)
      return {{"src", src.to_string()},
              {"dst", dst.to_string()},
              {"dest_qp", requester_qp(i)},
              {"packets", t.ack_packets},
              {"bytes", t.ack_bytes},
              {"ecn_ce", 0},
              {"psn_gaps", 0},
              {"retransmits", 0},
              {"naks", t.naks}};
    return {{"src", src.to_string()},
            {"dst", dst.to_string()},
            {"dest_qp", responder_qp(i)},
            {"packets", t.packets},
            {"bytes", t.bytes},
            {"ecn_ce", t.ecn_ce},
            {"psn_gaps", t.psn_gaps},
            {"retransmits", t.retransmits},
            {"naks", 0}};
  }
};

nlohmann::json Generator::truth_json() const {
  using nlohmann::json;
  const Truth& t = truth_;
  json by_opcode = json::object();
  for (std::size_t op = 0; op < t.by_opcode.size(); ++op)
    if (t.by_opcode[op])
      by_opcode[cap::opcode_name(static_cast<std::uint8_t>(op))] = t.by_opcode[op];

  json cnp_by_qp = json::object();
  std::uint64_t cnps = 0;
  // Requester QPNs ascend with the flow index, so this is the analyzer's ascending-QP order.
  for (std::uint32_t i = 0; i < flows_.size(); ++i) {
    if (!t.flows[i].cnps) continue;
    cnp_by_qp[std::to_string(requester_qp(i))] = t.flows[i].cnps;
    cnps += t.flows[i].cnps;
  }

  json priorities = json::array();
  for (std::size_t p = 0; p < 8; ++p)
    priorities.push_back({{"priority", p},
                          {"frames", t.pfc[p].frames},
                          {"xoff", t.pfc[p].xoff},
                          {"xon", t.pfc[p].xon},
                          {"quanta", t.pfc[p].quanta}});

  json flows = json::array();
  std::uint64_t gaps = 0, retransmits = 0;
  for (std::uint32_t i = 0; i < flows_.size(); ++i) {
    const FlowTruth& f = t.flows[i];
    gaps += f.psn_gaps;
    retransmits += f.retransmits;
    if (f.packets) flows.push_back(flow_json(i, false));
    if (f.ack_packets) flows.push_back(flow_json(i, true));
  }

  return {{"schema_version", 1},
          {"generator",
           {{"name", "rocehil-synth-capture"},
            {"seed", o_.seed},
            {"qps", o_.qps},
            {"hosts", o_.hosts},
            {"snaplen", o_.snaplen},
            {"payload", o_.payload},
            {"format", o_.format},
            {"lost_packets", t.lost}}},
          {"frames", t.frames},
          {"bytes", t.bytes},
          {"vlan_tagged", t.vlan_tagged},
          {"ipv4", t.ipv4},
          {"ipv6", t.ipv6},
          {"first_ns", t.first_ns},
          {"last_ns", t.last_ns},
          {"roce",
           {{"packets", t.roce_packets},
            {"malformed", 0},
            {"ecn_ce", t.ecn_ce},
            {"bytes", t.roce_bytes},
            {"acks", t.acks},
            {"naks", t.naks},
            {"rnr_naks", 0},
            {"by_opcode", by_opcode}}},
          {"cnp", {{"count", cnps}, {"by_dest_qp", cnp_by_qp}}},
          {"pfc", {{"frames", t.pfc_frames}, {"malformed", 0}, {"priorities", priorities}}},
          {"pause_8023x",
           {{"frames", t.pause_frames}, {"xoff", t.pause_xoff}, {"quanta", t.pause_quanta}}},
          {"psn_gaps", gaps},
          {"retransmits", retransmits},
          {"flow_count", flows.size()},
          {"flows", flows}};
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  CLI::App app(
      "Writes a synthetic mirror-port capture of RoCEv2 traffic for benchmarking and testing "
      "'rocehil analyze'.",
      "rocehil-synth-capture");
  app.footer(R"(
What the capture holds (as a switch mirror port of a 100G link would see it):
  * --qps RC connections between --hosts hosts (198.18.0.0/15; IPv6 ones in 2001:2::/48).
    The requester sends RDMA WRITEs (FIRST/MIDDLE/LAST or ONLY, 1-16 packets a message,
    --payload bytes each) with PSNs one apart, starting at a random PSN, so 24-bit wraps occur.
  * The responder's ACKs (one per --ack-every packets of a flow) go to the requester's QP.
  * --ce-percent of data packets carry ECN CE; each makes the responder send a CNP to the
    requester's QP, at most one per QP per 2 us (ConnectX MIN_TIME_BETWEEN_CNPS).
  * --loss-per-million drops data packets before the mirror: the capture shows a PSN gap, the
    responder's NAK (PSN sequence error) and a go-back-N resend from the lost PSN.
  * PFC XOFF on priority 3 (quanta 0xffff), each ended by an XON 5-300 us later, and a few
    802.3x PAUSE frames likewise.
  Timestamps advance by each frame's time on a --rate-gbps link (preamble, FCS and gap
  included); records keep the full wire length when --snaplen cuts them. One --seed gives the
  same bytes on every machine.

--truth writes what the generator sent, in the shape of 'rocehil analyze --json': frames,
roce.packets/acks/naks/ecn_ce/by_opcode, cnp.count and by_dest_qp, pfc per priority,
pause_8023x, and per-flow packets, bytes, ecn_ce, psn_gaps, retransmits and naks (gaps and
retransmits as analysis.hpp defines them, for the PSNs that reached the mirror).

Examples:
  rocehil-synth-capture --out mirror.pcap
  rocehil-synth-capture --out big.pcapng --format pcapng --frames 10000000 --qps 100000
  rocehil-synth-capture --out lossy.pcap --loss-per-million 200 --vlan 100 --truth lossy.json
  tcpdump -r mirror.pcap -c 5 -nn -v)");
  app.add_option("--out", o.out, "Capture file to write")->required();
  app.add_option("--frames", o.frames, "Records to write")
      ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{1} << 40))
      ->capture_default_str();
  app.add_option("--qps", o.qps, "RC connections (data flows), each with its own pair of QPNs")
      ->check(CLI::Range(1u, max_qps))
      ->capture_default_str();
  app.add_option("--hosts", o.hosts, "Distinct hosts (IP addresses) the flows run between")
      ->check(CLI::Range(2u, max_hosts))
      ->capture_default_str();
  app.add_option("--snaplen", o.snaplen,
                 "Bytes kept of each frame; 0 keeps whole frames (the ICRC is then valid)")
      ->check(CLI::Range(0u, 0u) | CLI::Range(min_snaplen, 262144u))
      ->capture_default_str();
  app.add_option("--payload", o.payload, "RoCE payload bytes per data packet (path MTU 4096)")
      ->check(CLI::Range(0u, mtu))
      ->capture_default_str();
  app.add_option("--ce-percent", o.ce_percent, "Share of data packets marked ECN CE")
      ->check(CLI::Range(0.0, 100.0))
      ->capture_default_str();
  app.add_option("--ack-every", o.ack_every, "Data packets per coalesced ACK, per flow")
      ->check(CLI::Range(1u, 255u))
      ->capture_default_str();
  app.add_option("--loss-per-million", o.loss_per_million,
                 "Data packets lost before the mirror (gap, NAK, go-back-N resend)")
      ->check(CLI::Range(0.0, 1e6))
      ->capture_default_str();
  app.add_option("--pfc-per-million", o.pfc_per_million,
                 "PFC XOFF frames (priority 3) per million records; each gets a later XON")
      ->check(CLI::Range(0.0, 1e5))
      ->capture_default_str();
  app.add_option("--pause-per-million", o.pause_per_million,
                 "802.3x PAUSE frames per million records; each gets a later resume")
      ->check(CLI::Range(0.0, 1e5))
      ->capture_default_str();
  app.add_option("--ipv6-percent", o.ipv6_percent, "Share of flows over IPv6")
      ->check(CLI::Range(0.0, 100.0))
      ->capture_default_str();
  app.add_option("--vlan", o.vlan,
                 "Put an 802.1Q tag with this VLAN id on every frame (PCP 3 data, 6 CNP, 7 PFC)")
      ->check(CLI::Range(0, 4094));
  app.add_option("--format", o.format, "pcap (us), pcap-ns or pcapng (ns)")
      ->check(CLI::IsMember({"pcap", "pcap-ns", "pcapng"}))
      ->capture_default_str();
  app.add_option("--seed", o.seed, "Seed; one seed gives the same file everywhere")
      ->capture_default_str();
  app.add_option("--rate-gbps", o.rate_gbps, "Link speed that spaces the timestamps")
      ->check(CLI::Range(0.001, 1e5))
      ->capture_default_str();
  app.add_option("--truth", o.truth, "Also write the ground-truth counts as JSON to this file");
  app.add_option("--wrap", o.wrap,
                 "Write every frame as a remote mirror session sends it: erspan2, erspan3 (with "
                 "100 ns timestamps), gre (TEB with a key); sequence numbers count up")
      ->check(CLI::IsMember({"none", "erspan2", "erspan3", "gre"}))
      ->capture_default_str();
  CLI11_PARSE(app, argc, argv);

  try {
    const auto t0 = std::chrono::steady_clock::now();
    Generator g(o);
    g.run();
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (!o.truth.empty()) {
      std::ofstream out(o.truth);
      out << g.truth_json().dump(1) << '\n';
      if (!out.flush())
        throw rocehil::system_error(fmt::format("cannot write the truth file '{}'", o.truth),
                                    errno);
    }
    fmt::print(stderr,
               "rocehil-synth-capture: wrote {} frames to {} in {:.2f} s ({:.1f} Mframes/s)\n",
               g.frames(), o.out, s, static_cast<double>(g.frames()) / s / 1e6);
  } catch (const rocehil::Error& e) {
    fmt::print(stderr, "rocehil-synth-capture: {}\n", e.what());
    return static_cast<int>(e.exit_code());
  }
  return 0;
}
