#pragma once

// What `rocehil analyze` measures in a mirror capture. Every field has one definition, written
// here and pinned by capture/tests/analyzer_test.cpp; the system tests check the counts against
// tshark on the same files.

#include <array>
#include <cstdint>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "rocehil/capture/decode.hpp"
#include "rocehil/capture/frame_builder.hpp"

namespace rocehil::capture {

// Which way the mirrored link carries frames to the capture point, as far as anyone said.
enum class MirrorDirection : std::uint8_t {
  unknown,
  leaf_to_spine,  // every frame here was sent by a leaf toward a spine
  spine_to_leaf,  // every frame here was sent by a spine toward a leaf
};

// "unknown", "leaf-to-spine", "spine-to-leaf": the spelling of the CLI and the JSON.
constexpr const char* to_string(MirrorDirection d) noexcept {
  switch (d) {
    case MirrorDirection::leaf_to_spine: return "leaf-to-spine";
    case MirrorDirection::spine_to_leaf: return "spine-to-leaf";
    case MirrorDirection::unknown: break;
  }
  return "unknown";
}

// "aa:bb:cc:dd:ee:ff", lower case, as ip link and tshark write MACs.
inline std::string to_string(const MacAddress& mac) {
  char text[18];
  std::snprintf(text, sizeof text, "%02x:%02x:%02x:%02x:%02x:%02x", mac[0], mac[1], mac[2], mac[3],
                mac[4], mac[5]);
  return text;
}

struct AnalyzerOptions {
  double link_gbps = 100.0;  // converts pause quanta to time: one quantum = 512 bit times
  // A file whose interfaces run at different speeds: the speed of each (by Frame::interface),
  // over link_gbps; an interface beyond the list takes link_gbps.
  std::vector<double> interface_link_gbps;
  std::uint32_t bin_ms = 10;  // width of a timeline bin
  // A timeline longer than this many bins (a bogus timestamp years away) is not grown; frames
  // beyond it are counted in Timeline::frames_outside instead. A million bins is 32 MB and
  // covers 2.7 hours at the default 10 ms bins.
  std::uint32_t max_bins = 1'000'000;
  // A continuous pause strictly longer than this is a storm (one of exactly storm_ms is not).
  double storm_ms = 100.0;
  // The observation window over which pause fractions are taken (see Analysis::window_start_ns).
  // 0 leaves the end that the frames give. A live capture sets them to when it started and
  // stopped, so a pause still in force when the capture stopped is counted up to that moment.
  std::uint64_t window_start_ns = 0;
  std::uint64_t window_end_ns = 0;
  // Where PFC comes from: every frame, when the capture point says the mirrored link runs
  // spine to leaf; otherwise frames whose source MAC is one of spine_macs.
  MirrorDirection direction = MirrorDirection::unknown;
  std::vector<MacAddress> spine_macs;
  // Remote mirrors: time frames by their ERSPAN III timestamps, taken at the switch, where the
  // header carries one near the collector's clock (mirror_layout.hpp says how near); otherwise
  // every frame is timed when the collector captured it.
  bool switch_timestamps = true;
  // Judge remote mirrors' GRE sequence numbers: off where frames of a session were left out
  // before the analyzer saw them (a capture filter run inside the tunnel), so that their numbers
  // are not taken for losses; the capture's source counts the losses over the whole session then.
  bool mirror_sequences = true;
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
  // The UDP source port of the flow's first packet: the ECMP entropy RoCEv2 puts there, which a
  // QP keeps (pinned per QP when QP scaling asks for it).
  std::uint16_t udp_sport = 0;
};

struct Flow {
  FlowKey key;
  FlowStats stats;
};

// Pause accounting, per (source MAC, priority): an XOFF (class bit set, quanta > 0) at ts pauses
// the priority until ts + quanta x 512 / link Gbps; another XOFF before that moment reloads the
// timer and the pause goes on (one continuous pause), one at or after it starts a new pause (the
// old one ended at its expiry); an XON (quanta 0) ends the pause at its ts. Pauses are clipped to
// the observation window; one still in force at the window's end ends there.
struct PfcPriority {
  std::uint64_t frames = 0;  // PFC frames with this priority's class-enable bit set
  std::uint64_t xoff = 0;    // ... and quanta > 0
  std::uint64_t xon = 0;     // ... and quanta == 0
  std::uint64_t quanta = 0;  // sum of this priority's quanta over those frames
  double pause_ns = 0;       // quanta x 512 / link Gbps: the pause requested
  // The pause in force: the sum over senders of their continuous pauses. With one sender per
  // mirrored direction (a link's far end) it is the time the priority was paused.
  double paused_ns = 0;
  double longest_pause_ns = 0;  // the longest continuous pause of one sender
  double pause_fraction = 0;    // paused_ns / window length; 0 for an empty window
  std::uint64_t storms = 0;     // continuous pauses longer than storm_ms
};

// One continuous pause longer than AnalyzerOptions::storm_ms.
struct PfcStorm {
  std::uint8_t priority = 0;  // 0-7, or 8 for 802.3x PAUSE
  MacAddress source_mac{};
  std::uint64_t start_ns = 0;  // the XOFF that began it
  std::uint64_t end_ns = 0;    // expiry, XON or window end, rounded to the nearest ns
  double duration_ns = 0;      // end - start, unrounded
  bool ongoing = false;        // still in force when the window ended
  bool from_spine = false;
};

// One remote mirror session as the collector received it: the frames one switch sent under one
// ERSPAN session ID (or GRE key, for GRE TEB; neither for ERSPAN I).
struct MirrorSession {
  MirrorKind kind = MirrorKind::none;
  IpAddress source;     // the outer IP source: the switch
  IpAddress collector;  // the outer IP destination
  bool has_id = false;
  std::uint32_t id = 0;         // ERSPAN session ID; GRE key for GRE TEB
  std::uint64_t frames = 0;     // tunnel packets received (malformed ones are not sessions' frames)
  std::uint64_t bytes = 0;      // their wire lengths, tunnel headers included
  std::uint64_t truncated = 0;  // frames the switch cut (ERSPAN T bit)
  // GRE sequence numbers, on the frames that carry one (32-bit, wrapping): a number more than
  // one past the highest seen is a gap of that many frames lost on the way from the switch; one
  // at or below it arrived late (reordered or duplicated) and takes one off the losses.
  std::uint64_t sequenced = 0;  // frames with a sequence number
  std::uint64_t gaps = 0;       // sequence numbers skipped
  std::uint64_t late = 0;
  std::uint32_t first_sequence = 0;
  std::uint32_t last_sequence = 0;  // the highest seen
  std::uint64_t lost() const noexcept { return gaps > late ? gaps - late : 0; }
  // sequenced / (sequenced + lost): the share of the session's frames that reached the
  // collector; 1 without sequence numbers (nothing to tell losses by).
  double coverage() const noexcept {
    const std::uint64_t total = sequenced + lost();
    return total == 0 ? 1.0 : static_cast<double>(sequenced) / static_cast<double>(total);
  }
  // ERSPAN III timestamps: frames timed by the switch's clock, frames whose timestamp was too
  // far from the collector's to use (timed at capture), and how far the two clocks were apart
  // (capture time minus switch time, over the frames timed by the switch).
  std::uint64_t switch_timed = 0;
  std::uint64_t clock_too_far = 0;
  TimestampGranularity granularity = TimestampGranularity::us100;
  std::int64_t min_clock_offset_ns = 0;
  std::int64_t max_clock_offset_ns = 0;
  // What the headers say the frames came from, with frame counts (at most 256 of each; more go
  // uncounted there): ERSPAN II's port index (III: subheader ID 1 or 3), the original VLAN.
  std::vector<std::pair<std::uint32_t, std::uint64_t>> ports;
  std::vector<std::pair<std::uint16_t, std::uint64_t>> vlans;
};

// RoCE packets of one traffic class, by the DSCP their IP header carries (what a switch queues
// them by): data, ACKs and CNPs alike, so "CNPs on DSCP 48" and "ECN-CE on DSCP 26" are told
// apart from the data they answer.
struct DscpCounts {
  std::uint64_t packets = 0;  // RoCE packets with a complete BTH (CNPs included)
  std::uint64_t bytes = 0;    // their wire lengths
  std::uint64_t ecn_ce = 0;   // ... with IP ECN == 0b11
  std::uint64_t cnps = 0;     // ... that are CNPs (BTH opcode 0x81)
  std::uint64_t acks = 0;     // ACKNOWLEDGE packets with an ACK syndrome (AETH captured)
  std::uint64_t naks = 0;     // ... with a NAK syndrome (RNR NAKs are counted apart)
  std::uint64_t rnr_naks = 0;
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
  // The observation window: from first_ns (or options.window_start_ns when set and earlier) to
  // last_ns (or options.window_end_ns when later). Pause fractions are taken over it.
  std::uint64_t window_start_ns = 0;
  std::uint64_t window_end_ns = 0;

  struct Roce {
    std::uint64_t packets = 0;    // UDP dst 4791 with a complete BTH captured (CNPs included)
    std::uint64_t malformed = 0;  // UDP dst 4791 whose UDP length leaves no room for a BTH
    // UDP dst 4791 whose BTH was cut: by the snap length, or by a mirror session that truncates
    // frames. A RoCE header captured whole counts in packets however short the capture.
    std::uint64_t truncated = 0;
    std::uint64_t ecn_ce = 0;    // of packets, those with IP ECN == 0b11
    std::uint64_t bytes = 0;     // wire bytes of packets
    std::uint64_t acks = 0;      // ACKNOWLEDGE packets with an ACK syndrome
    std::uint64_t naks = 0;      // ACKNOWLEDGE packets with a NAK syndrome
    std::uint64_t rnr_naks = 0;  // ACKNOWLEDGE packets with an RNR NAK syndrome
    std::array<std::uint64_t, 256> by_opcode{};
    std::array<DscpCounts, 64> by_dscp{};  // indexed by DSCP; each sums to the fields above
  } roce;

  struct Cnp {
    std::uint64_t count = 0;
    std::vector<std::pair<std::uint32_t, std::uint64_t>> by_dest_qp;  // ascending QP
  } cnp;

  struct Pfc {
    std::uint64_t frames = 0;
    std::uint64_t malformed = 0;  // MAC control frames (PFC or PAUSE) cut before their fields
    std::array<PfcPriority, 8> priorities{};
    // Storms of every priority and of 802.3x PAUSE (priority 8), ordered by start. The list
    // grows when a storm ends, never per frame.
    std::vector<PfcStorm> storms;
    // Frames from a spine: options.direction or options.spine_macs said where frames come from.
    bool direction_known = false;
    struct FromSpine {
      std::uint64_t frames = 0;  // PFC and 802.3x PAUSE frames sent by a spine
      std::uint64_t xoff = 0;    // ... with at least one priority (or the link) in XOFF
      double paused_ns = 0;      // their pauses, every priority and 802.3x summed
      std::uint64_t storms = 0;
    } from_spine;
  } pfc;

  // 802.3x PAUSE: the whole link, accounted as PFC priorities are, under the same rules.
  struct Pause {
    std::uint64_t frames = 0;
    std::uint64_t xoff = 0;
    std::uint64_t quanta = 0;
    double pause_ns = 0;
    double paused_ns = 0;
    double longest_pause_ns = 0;
    double pause_fraction = 0;
    std::uint64_t storms = 0;
  } pause_8023x;

  // Remote mirrors: frames received through a tunnel are analysed as the frames they carry
  // (their RoCE, CNP, PFC and PAUSE above; the wire bytes those frames had); `frames` and
  // `bytes` at the top count the tunnel packets as received.
  struct Mirrors {
    std::uint64_t frames = 0;     // tunnel packets opened
    std::uint64_t malformed = 0;  // broken tunnel headers (FrameKind::mirror_malformed)
    // The wire lengths the mirrored frames had: what the mirrored ports' own octet counters count.
    std::uint64_t mirrored_bytes = 0;
    std::vector<MirrorSession> sessions;  // by source, kind and id
    // Frames lost on the way from the switches, by GRE sequence numbers, over all sessions.
    std::uint64_t lost() const noexcept;
    double coverage() const noexcept;
  } mirror;

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
