#pragma once

// Time paused per PFC priority (and for 802.3x PAUSE), from the MAC control frames of a capture:
// one state machine per (source MAC, class), because each sender pauses its peer on its own.
//
// An XOFF (class bit set, quanta > 0) at t pauses the class until t + quanta x 512 / link Gbps.
// An XOFF before that moment reloads the timer, as a receiving MAC does: the pause goes on, one
// continuous pause, and ends at the new expiry (a smaller refresh shortens it). An XOFF at or
// after the expiry starts a new pause; the old one ended at its expiry. An XON (quanta 0) ends the
// pause at its t. A continuous pause strictly longer than storm_ms is a storm.
//
// Times are kept as offsets in ns (doubles) from the first frame seen: absolute epoch
// nanoseconds do not fit a double's 53 bits, and a quantum is a fraction of a ns (5.12 ns at
// 100G). Offsets stay exact to well under a ns for days of capture.
//
// Frames may arrive slightly out of order (mirror ports reorder a little): each state machine
// takes a frame stamped before the latest one it has seen as arriving at that latest time, so its
// clock never runs backwards and pauses of one sender never overlap.
//
// The per-frame path allocates only when a new sender grows the sender table (rarely: a link has
// two ends) and when a storm ends and joins the storm list.

#include <array>
#include <cstdint>
#include <vector>

#include "analysis/flat_table.hpp"
#include "rocehil/capture/analysis.hpp"

namespace rocehil::capture {

class PauseTracker {
 public:
  static constexpr std::size_t pfc_priorities = 8;
  static constexpr std::size_t pause_8023x = 8;  // 802.3x PAUSE: the class after the priorities
  static constexpr std::size_t class_count = 9;

  struct ClassTotals {
    double paused_ns = 0;
    double longest_pause_ns = 0;
    std::uint64_t storms = 0;
  };
  struct Totals {
    std::array<ClassTotals, class_count> classes{};
    std::vector<PfcStorm> storms;  // ordered by start, then class, then source MAC
    Analysis::Pfc::FromSpine from_spine;
  };

  // Uses link_gbps, storm_ms, direction and spine_macs of `options`.
  explicit PauseTracker(const AnalyzerOptions& options);

  // A PFC frame: quanta[p] applies to each priority p whose bit is set in class_enable (the high
  // byte of the vector is unused by 802.1Qbb and ignored). `quanta_be` points at the eight 16-bit
  // big-endian quanta as they are on the wire.
  // `quantum_ns` is one quantum of the link the frame came in on (a file merged from links of
  // different speeds); without it, of options.link_gbps.
  void pfc(std::uint64_t ts_ns, const std::uint8_t* source_mac, std::uint16_t class_enable,
           const std::uint8_t* quanta_be, double quantum_ns);
  void pfc(std::uint64_t ts_ns, const std::uint8_t* source_mac, std::uint16_t class_enable,
           const std::uint8_t* quanta_be) {
    pfc(ts_ns, source_mac, class_enable, quanta_be, quantum_ns_);
  }
  // An 802.3x PAUSE frame for the whole link.
  void pause(std::uint64_t ts_ns, const std::uint8_t* source_mac, std::uint16_t quanta,
             double quantum_ns);
  void pause(std::uint64_t ts_ns, const std::uint8_t* source_mac, std::uint16_t quanta) {
    pause(ts_ns, source_mac, quanta, quantum_ns_);
  }

  // Totals with every pause still open closed at the window's end (or at its expiry if that
  // comes first); those still in force at the end are `ongoing`. Pauses are clipped to
  // [window_start_ns, window_end_ns]. Leaves the tracker as it was, so frames can follow.
  Totals totals(std::uint64_t window_start_ns, std::uint64_t window_end_ns) const;
  // Whether any PFC or PAUSE frame came.
  bool seen() const noexcept { return started_; }
  // Adds `more`, another tracker's totals over the same window, to `into` (storms kept in
  // order).
  static void add(Totals& into, Totals&& more);

 private:
  struct ClassState {
    double start = 0;   // offsets from origin_ns_
    double expiry = 0;  // the pause is in force while start <= t < expiry
    double clock = 0;   // the latest frame time this state machine has seen
    bool paused = false;
    bool seen = false;  // clock is valid
  };
  struct Sender {
    std::array<ClassState, class_count> classes;
    bool from_spine = false;
    bool known = false;  // from_spine has been decided
  };
  struct MacHash {
    std::uint64_t operator()(std::uint64_t mac) const noexcept { return mix64(mac); }
  };

  Sender& sender(const std::uint8_t* source_mac, std::uint64_t& key);
  double offset(std::uint64_t ts_ns);
  void update(Sender& s, std::uint64_t key, std::size_t cls, double t, std::uint16_t quanta,
              double quantum_ns);
  // Adds a finished pause of class `cls` from [start, end] (offsets) to `totals`.
  void close(Totals& totals, std::uint64_t key, bool from_spine, std::size_t cls, double start,
             double end, bool ongoing) const;

  double quantum_ns_;
  double storm_ns_;
  bool all_from_spine_;
  std::vector<std::uint64_t> spine_keys_;
  bool started_ = false;
  std::uint64_t origin_ns_ = 0;
  FlatTable<std::uint64_t, Sender, MacHash> senders_{16};
  Totals closed_;  // pauses that have ended, and the from-spine frame counts
};

}  // namespace rocehil::capture
