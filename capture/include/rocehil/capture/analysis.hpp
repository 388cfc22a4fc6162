#pragma once

// What `rocehil analyze` measures in a mirror capture. Every field has one definition, written
// here and pinned by capture/tests/analyzer_test.cpp; the system tests check the counts against
// tshark on the same files.

#include <array>
#include <cstdint>
#include <utility>
#include <vector>

#include "rocehil/capture/decode.hpp"

namespace rocehil::capture {

struct AnalyzerOptions {
  double link_gbps = 100.0;   // converts pause quanta to time: one quantum = 512 bit times
  std::uint32_t bin_ms = 10;  // width of a timeline bin
  // A timeline longer than this many bins (a bogus timestamp years away) is not grown; frames
  // beyond it are counted in Timeline::frames_outside instead. A million bins is 32 MB and
  // covers 2.7 hours at the default 10 ms bins.
  std::uint32_t max_bins = 1'000'000;
};

// A flow is (IP source, IP destination, BTH destination QP) over RoCE packets other than CNPs.
struct FlowKey {
  IpAddress src;
  IpAddress dst;
  std::uint32_t dest_qp = 0;
  bool operator==(const FlowKey&) const = default;
};

struct FlowStats {
  std::uint64_t packets = 0;
  std::uint64_t bytes = 0;   // sum of wire lengths (the records' original lengths)
  std::uint64_t ecn_ce = 0;  // packets with IP ECN == 0b11
  // On request packets only (SEND, WRITE, READ REQUEST), PSNs compared with 24-bit wrap: a PSN
  // more than one past the highest seen is one gap event (after a READ REQUEST, "one" widens to
  // the PSNs its response can take: DMA length / 256, the smallest MTU); a PSN at or below the
  // highest seen is one retransmit.
  std::uint64_t psn_gaps = 0;
  std::uint64_t retransmits = 0;
  std::uint64_t naks = 0;  // ACKNOWLEDGE packets whose AETH syndrome is a NAK (0x60-0x7f)
  std::uint64_t first_ns = 0;
  std::uint64_t last_ns = 0;
};

struct Flow {
  FlowKey key;
  FlowStats stats;
};

struct PfcPriority {
  std::uint64_t frames = 0;  // PFC frames with this priority's class-enable bit set
  std::uint64_t xoff = 0;    // ... and quanta > 0
  std::uint64_t xon = 0;     // ... and quanta == 0
  std::uint64_t quanta = 0;  // sum of this priority's quanta over those frames
  double pause_ns = 0;       // quanta x 512 / link Gbps
};

struct TimelineBin {
  std::uint64_t roce_bytes = 0;  // wire bytes of RoCE packets (CNPs included)
  std::uint64_t cnp = 0;
  std::uint64_t pfc_xoff = 0;  // PFC frames with at least one priority in XOFF
  std::uint64_t ecn_ce = 0;    // RoCE packets with CE
};

struct Analysis {
  AnalyzerOptions options;

  std::uint64_t frames = 0;        // every record
  std::uint64_t bytes = 0;         // sum of wire lengths of every record
  std::uint64_t non_ethernet = 0;  // records of another link type, counted but not decoded
  std::uint64_t vlan_tagged = 0;
  std::uint64_t ipv4 = 0;
  std::uint64_t ipv6 = 0;
  std::uint64_t first_ns = 0;  // smallest and largest timestamp seen (0 when no frames)
  std::uint64_t last_ns = 0;

  struct Roce {
    std::uint64_t packets = 0;    // UDP dst 4791 with a complete BTH captured (CNPs included)
    std::uint64_t malformed = 0;  // UDP dst 4791 whose BTH is short or cut by the snap length
    std::uint64_t ecn_ce = 0;     // of packets, those with IP ECN == 0b11
    std::uint64_t bytes = 0;      // wire bytes of packets
    std::uint64_t acks = 0;       // ACKNOWLEDGE packets with an ACK syndrome
    std::uint64_t naks = 0;       // ACKNOWLEDGE packets with a NAK syndrome
    std::uint64_t rnr_naks = 0;   // ACKNOWLEDGE packets with an RNR NAK syndrome
    std::array<std::uint64_t, 256> by_opcode{};
  } roce;

  struct Cnp {
    std::uint64_t count = 0;
    std::vector<std::pair<std::uint32_t, std::uint64_t>> by_dest_qp;  // ascending QP
  } cnp;

  struct Pfc {
    std::uint64_t frames = 0;
    std::uint64_t malformed = 0;  // MAC control frames (PFC or PAUSE) cut before their fields
    std::array<PfcPriority, 8> priorities{};
  } pfc;

  struct Pause {
    std::uint64_t frames = 0;
    std::uint64_t xoff = 0;
    std::uint64_t quanta = 0;
    double pause_ns = 0;
  } pause_8023x;

  std::vector<Flow> flows;  // descending bytes, then ascending key for a stable order

  struct Timeline {
    std::uint32_t bin_ms = 0;
    // The first record's timestamp. Bin i covers [start_ns + i*bin_ms, start_ns + (i+1)*bin_ms);
    // records stamped before start_ns (mirror ports reorder a little) count in bin 0.
    std::uint64_t start_ns = 0;
    std::vector<TimelineBin> bins;
    std::uint64_t frames_outside = 0;
  } timeline;
};

}  // namespace rocehil::capture
