#pragma once

// The Analyzer's accounting of remote mirror sessions: which switches sent frames under which
// session, how many the way to the collector lost (GRE sequence numbers), how they were timed.
// A capture holds a handful of sessions, so they sit in a short vector searched from the last
// one hit; it grows only when a session, port or VLAN is first seen.

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
  void count(const MirrorHeader& m, std::uint64_t wire_len, FrameTiming timing,
             std::int64_t clock_offset_ns);
  // Folds in the sessions of the frames that come after these in the capture (a later part of
  // a file): exactly the one-pass result unless frames were reordered across the cut.
  void append(const MirrorSessions& later);
  // Adds the sessions another worker of the same live capture saw at the same time. A session
  // is normally on one worker (its frames share their outer addresses, which the kernel's fanout
  // hashes); one seen by several has its losses taken from the span of sequence numbers.
  void add(const MirrorSessions& other);
  bool empty() const noexcept { return sessions_.empty(); }
  // Ordered by source address, kind and id.
  std::vector<MirrorSession> result() const;

 private:
  MirrorSession& find(MirrorKind kind, const IpAddress& source, const IpAddress& collector,
                      bool has_id, std::uint32_t id);
  std::vector<MirrorSession> sessions_;
  std::size_t last_ = 0;
};

}  // namespace rocehil::capture
