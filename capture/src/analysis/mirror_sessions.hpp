#pragma once

// The Analyzer's accounting of remote mirror sessions: which switches sent frames under which
// session, how many the way to the collector lost (GRE sequence numbers), how they were timed.
// A capture holds a handful of sessions, so they sit in a short vector searched from the last
// one hit; it grows only when a session, port or VLAN is first seen.

#include <algorithm>
#include <cstdint>
#include <vector>

#include "frames/mirror_layout.hpp"
#include "rocehil/capture/analysis.hpp"
#include "rocehil/capture/decode.hpp"

namespace rocehil::capture {

// How the analyzer timed a frame.
enum class FrameTiming : std::uint8_t {
  capture,        // the capture's timestamp: no switch timestamp, or not asked to use one
  switch_clock,   // the ERSPAN III timestamp
  clock_too_far,  // an ERSPAN III timestamp too far from the capture's to be the same clock
};

class MirrorSessions {
 public:
  // What counting a session's frame needs to know beyond the frame's own fields: the same for
  // every frame of the session, so that a caller counting many works it out once.
  struct Shape {
    bool sequenced = false;  // its sequence numbers are counted
    bool vlans = false;      // ERSPAN II and III carry the mirrored frame's VLAN
    bool erspan2 = false;    // carries a port index, 0 included (others: where not 0)
    TimestampGranularity granularity = TimestampGranularity::us100;
  };
  // `count_sequences`: false where a filter thinned the session before the analyzer saw it.
  static Shape shape_of(const MirrorHeader& m, bool count_sequences) noexcept {
    Shape shape;
    shape.sequenced = m.has_sequence && count_sequences;
    shape.vlans = m.kind == MirrorKind::erspan2 || m.kind == MirrorKind::erspan3;
    shape.erspan2 = m.kind == MirrorKind::erspan2;
    shape.granularity = m.granularity;
    return shape;
  }

  // One tunnel packet (not malformed) of `wire_len` bytes as received. `clock_offset_ns` is the
  // capture time minus the switch time, for a frame timed by the switch.
  void count(const MirrorHeader& m, std::uint64_t wire_len, FrameTiming timing,
             std::int64_t clock_offset_ns) {
    count_frame(session(index_of(m)), shape_of(m, true), frame_fields(m), wire_len, timing,
                clock_offset_ns);
  }
  // The index of the session `m` belongs to: it stays the session's.
  std::size_t index_of(const MirrorHeader& m) {
    const bool erspan = m.kind == MirrorKind::erspan2 || m.kind == MirrorKind::erspan3;
    const bool has_id = erspan || (m.kind == MirrorKind::gre_teb && m.has_key);
    const std::uint32_t id = erspan ? m.session_id : m.key;
    find(m.kind, m.outer_src, m.outer_dst, has_id, id);
    return last_;
  }
  // Valid until the next index_of() of a session not seen before.
  MirrorSession& session(std::size_t index) noexcept { return sessions_[index]; }

  // count() of a frame of session `s`, of shape `shape`, whose headers carry `v`.
  // Inline: the per-frame path of a remote mirror (mirror_sessions.cpp has the rest).
  static void count_frame(MirrorSession& s, const Shape& shape, const MirrorFrameFields& v,
                          std::uint64_t wire_len, FrameTiming timing,
                          std::int64_t clock_offset_ns) {
    // Counters that seldom change are written only when they do: stores, not instructions,
    // bound this path.
    ++s.frames;
    s.bytes += wire_len;
    if (v.truncated) ++s.truncated;
    if (shape.sequenced) {
      if (v.sequence == s.last_sequence + 1 && s.sequenced > 0) {
        s.last_sequence = v.sequence;
        ++s.sequenced;
      } else {
        count_sequence(s, v.sequence);
      }
    }
    if (timing == FrameTiming::switch_clock) {
      if (s.switch_timed == 0) {
        s.min_clock_offset_ns = s.max_clock_offset_ns = clock_offset_ns;
        s.granularity = shape.granularity;
      }
      if (clock_offset_ns < s.min_clock_offset_ns) s.min_clock_offset_ns = clock_offset_ns;
      if (clock_offset_ns > s.max_clock_offset_ns) s.max_clock_offset_ns = clock_offset_ns;
      ++s.switch_timed;
    } else if (timing == FrameTiming::clock_too_far) {
      ++s.clock_too_far;
    }
    if (v.port_index != 0 || shape.erspan2) {
      if (!s.ports.empty() && s.ports.back().first == v.port_index) {
        ++s.ports.back().second;
      } else {
        count_port(s, v.port_index);
      }
    }
    if (shape.vlans) {
      if (!s.vlans.empty() && s.vlans.back().first == v.vlan) {
        ++s.vlans.back().second;
      } else {
        count_vlan(s, v.vlan);
      }
    }
  }
  // Folds in the sessions of the frames that come after these in the capture (a later part of
  // a file): exactly the one-pass result unless frames were reordered across the cut.
  void append(const MirrorSessions& later);
  // Adds the sessions another worker of the same live capture saw at the same time. A session
  // is normally on one worker (its frames share their outer addresses, which the kernel's fanout
  // hashes); one seen by several has its losses taken from the span of sequence numbers.
  void add(const MirrorSessions& other);
  // Ordered by source address, kind and id.
  std::vector<MirrorSession> result() const;

 private:
  MirrorSession& find(MirrorKind kind, const IpAddress& source, const IpAddress& collector,
                      bool has_id, std::uint32_t id);
  MirrorSession* merge(const MirrorSession& b);
  static void count_sequence(MirrorSession& s, std::uint32_t sequence);
  static void count_port(MirrorSession& s, std::uint32_t port);
  static void count_vlan(MirrorSession& s, std::uint16_t vlan);
  std::vector<MirrorSession> sessions_;
  std::size_t last_ = 0;
};

}  // namespace rocehil::capture
