#pragma once

// Test helper: a mixed capture of RoCE, CNP, PFC and PAUSE frames with the faults a mirror port
// shows (PSN gaps, go-back-N, truncated BTHs, reordering, another link type), shared by the
// analyzer's tests of parts folded together and of remote mirrors.

#include <array>
#include <cstdint>
#include <deque>
#include <random>
#include <string>
#include <vector>

#include "addresses.hpp"
#include "rocehil/capture/analysis.hpp"
#include "rocehil/capture/analysis_json.hpp"
#include "rocehil/capture/analyzer.hpp"
#include "rocehil/capture/frame.hpp"
#include "rocehil/capture/frame_builder.hpp"
#include "rocehil/common/roce_wire.hpp"

namespace rocehil::capture::testing {

// Frames and the bytes they point at.
struct Capture {
  std::deque<std::vector<std::uint8_t>> bytes;
  std::vector<Frame> frames;
  std::vector<std::uint32_t> connection;  // per frame: the QP pair it belongs to, or random

  void add(std::vector<std::uint8_t> b, std::uint64_t ts, std::uint32_t snaplen = 65535,
           std::uint16_t link = link_type::ethernet) {
    bytes.push_back(std::move(b));
    Frame f;
    f.ts_ns = ts;
    f.wire_len = static_cast<std::uint32_t>(bytes.back().size());
    f.caplen = std::min(f.wire_len, snaplen);
    f.link_type = link;
    f.data = bytes.back().data();
    frames.push_back(f);
  }
};

inline IpAddress address(std::uint32_t host, bool v6) {
  if (!v6) return v4(198, 18, static_cast<std::uint8_t>(host >> 8), host & 0xff);
  std::array<std::uint8_t, 16> b{0x20, 0x01, 0x0d, 0xb8};
  b[14] = static_cast<std::uint8_t>(host >> 8);
  b[15] = static_cast<std::uint8_t>(host);
  return IpAddress::v6(b.data());
}

// A mixed capture: RC flows over IPv4 and IPv6 sending in order, skipping PSNs, going back N
// (so retransmissions cross any cut), READ requests, ACKs and NAKs, UD sends, CNPs, ECN marks,
// PFC XOFF refreshes long enough to be storms, XONs, 802.3x PAUSE, frames of another link type,
// truncated BTHs, slightly reordered timestamps and one long silence in the timeline.
inline Capture mixed_capture(std::uint32_t seed, std::size_t frames, bool reorder = true) {
  std::mt19937 rng(seed);
  namespace op = wire::opcode;
  const auto pick = [&](std::uint32_t n) { return static_cast<std::uint32_t>(rng() % n); };
  struct Qp {
    IpAddress src, dst;
    std::uint32_t qp;
    std::uint32_t next_psn;
    std::uint16_t sport;
  };
  std::vector<Qp> qps;
  for (std::uint32_t i = 0; i < 24; ++i) {
    const bool v6 = i % 5 == 4;
    qps.push_back({address(1 + i % 7, v6), address(100 + i % 3, v6), 0x100 + i,
                   i == 3 ? 0xfffff0u : pick(1000),
                   static_cast<std::uint16_t>(49152 + pick(4096))});
  }
  Capture c;
  std::uint64_t ts = 1'700'000'000'000'000'000ull;
  for (std::size_t n = 0; n < frames; ++n) {
    ts += 1000 + pick(50'000);
    if (n == frames / 2) ts += 3'000'000'000ull;  // a silence of 3 s: empty bins between
    const std::uint64_t stamp = reorder && pick(20) == 0 ? ts - 700 : ts;  // mirror reordering
    const std::uint32_t what = pick(100);
    const std::uint32_t which = pick(static_cast<std::uint32_t>(qps.size()));
    Qp& q = qps[which];
    c.connection.push_back(what < 86 ? which : pick(1000));
    RoceFrame f;
    f.src = q.src;
    f.dst = q.dst;
    f.bth.dest_qp = q.qp;
    f.udp_src_port = q.sport;
    f.payload_size = 32;
    f.ecn = pick(10) == 0 ? 0b11 : 0b10;
    if (pick(7) == 0) f.vlans = {{0x8100, 5}};
    if (what < 60) {
      f.bth.opcode = op::rc_write_only;
      if (pick(50) == 0) q.next_psn += 1 + pick(5);                         // lost packets: a gap
      if (pick(40) == 0) q.next_psn -= std::min(q.next_psn, 1 + pick(30));  // go back N
      f.bth.psn = q.next_psn & 0xffffff;
      q.next_psn = (q.next_psn + 1) & 0xffffff;
      c.add(build(f), stamp, pick(30) == 0 ? 54 : 65535);  // some cut inside the BTH
    } else if (what < 64) {
      f.bth.opcode = op::rc_read_request;
      f.bth.psn = q.next_psn & 0xffffff;
      f.reth.dma_length = 256 * (1 + pick(8));
      f.payload_size = 0;
      q.next_psn = (q.next_psn + f.reth.dma_length / 256) & 0xffffff;
      c.add(build(f), stamp);
    } else if (what < 74) {
      f.src = q.dst;
      f.dst = q.src;
      f.bth.opcode = op::rc_acknowledge;
      f.aeth.syndrome =
          static_cast<std::uint8_t>(pick(8) == 0 ? 0x60 + pick(4) : (pick(8) == 0 ? 0x20 : 0x1f));
      f.payload_size = 0;
      c.add(build(f), stamp);
    } else if (what < 78) {
      f.bth.opcode = op::ud_send_only;
      f.bth.psn = pick(1 << 24);
      c.add(build(f), stamp);
    } else if (what < 86) {
      c.add(build(cnp_frame(q.dst, q.src, q.qp)), stamp);
    } else if (what < 96) {
      // PFC from two senders; priority 3 refreshed often enough to run for over 100 ms.
      const MacAddress mac{0x02, 0, 0, 0, 0, static_cast<std::uint8_t>(0x10 + pick(2))};
      std::array<std::uint16_t, 8> quanta{};
      quanta[3] = pick(6) == 0 ? 0 : 0xffff;
      quanta[5] = static_cast<std::uint16_t>(pick(3) * 1000);
      c.add(build_pfc(0x0028, quanta, mac), stamp);
    } else if (what < 98) {
      c.add(build_pause(static_cast<std::uint16_t>(pick(2) * 0x8000)), stamp);
    } else {
      c.add(std::vector<std::uint8_t>(60, 0xab), stamp, 65535, 113);  // Linux cooked
    }
  }
  return c;
}

inline AnalyzerOptions options() {
  AnalyzerOptions o;
  o.bin_ms = 1;
  o.storm_ms = 0.2;  // refreshed XOFFs make storms at the capture's pace
  o.spine_macs = {MacAddress{0x02, 0, 0, 0, 0, 0x11}};
  return o;
}

// The analysis of all of `c` in one pass, as JSON text: what folded parts must equal.
inline std::string one_pass(const Capture& c) {
  Analyzer a(options());
  a.add(c.frames);
  return to_json_text(a.result());
}

}  // namespace rocehil::capture::testing
