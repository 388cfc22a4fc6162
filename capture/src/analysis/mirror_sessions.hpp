#pragma once

// The Analyzer's accounting of remote mirror sessions: which switches sent frames under which
// session, how many the way to the collector lost (GRE sequence numbers), how they were timed.
// A capture holds a handful of sessions, so they sit in a short vector searched from the last
// one hit; it grows only when a session, port or VLAN is first seen.

#include <algorithm>
#include <cstdint>
#include <vector>

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
  // One tunnel packet (not malformed) of `wire_len` bytes as received. `clock_offset_ns` is the
  // capture time minus the switch time, for a frame timed by the switch.
  // Inline: the per-frame path of a remote mirror (mirror_sessions.cpp has the rest).
  void count(const MirrorHeader& m, std::uint64_t wire_len, FrameTiming timing,
             std::int64_t clock_offset_ns) {
    const bool erspan = m.kind == MirrorKind::erspan2 || m.kind == MirrorKind::erspan3;
    const bool has_id = erspan || (m.kind == MirrorKind::gre_teb && m.has_key);
    const std::uint32_t id = erspan ? m.session_id : m.key;
    MirrorSession* s = last_ < sessions_.size() ? &sessions_[last_] : nullptr;
    if (!s || s->kind != m.kind || s->has_id != has_id || s->id != id ||
        !(s->source == m.outer_src) || !(s->collector == m.outer_dst))
      s = &find(m.kind, m.outer_src, m.outer_dst, has_id, id);
    ++s->frames;
    s->bytes += wire_len;
    s->truncated += m.truncated;
    if (m.has_sequence) {
      if (s->sequenced > 0 && m.sequence == s->last_sequence + 1) {
        s->last_sequence = m.sequence;
        ++s->sequenced;
      } else {
        count_sequence(*s, m.sequence);
      }
    }
    if (timing == FrameTiming::switch_clock) {
      if (s->switch_timed == 0) s->min_clock_offset_ns = s->max_clock_offset_ns = clock_offset_ns;
      s->min_clock_offset_ns = std::min(s->min_clock_offset_ns, clock_offset_ns);
      s->max_clock_offset_ns = std::max(s->max_clock_offset_ns, clock_offset_ns);
      s->granularity = m.granularity;
      ++s->switch_timed;
    }
    s->clock_too_far += timing == FrameTiming::clock_too_far;
    if (m.port_index != 0 || m.kind == MirrorKind::erspan2) {
      if (!s->ports.empty() && s->ports.back().first == m.port_index) {
        ++s->ports.back().second;
      } else {
        count_port(*s, m.port_index);
      }
    }
    if (erspan) {
      if (!s->vlans.empty() && s->vlans.back().first == m.vlan) {
        ++s->vlans.back().second;
      } else {
        count_vlan(*s, m.vlan);
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
