#pragma once

// Sends PFC (802.1Qbb) or 802.3x PAUSE frames out of an interface at a fixed rate: what an
// engineer points at a switch port to exercise its PFC watchdog, and how the testbed makes PFC
// on veth links, which Linux never sends by itself.

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "rocehil/capture/frame_builder.hpp"

namespace rocehil::capture {

struct InjectOptions {
  std::string iface;
  bool pause_8023x = false;            // false: PFC; true: 802.3x PAUSE (priorities ignored)
  std::vector<unsigned> priorities;    // PFC priorities 0-7 whose class-enable bit is set
  std::uint16_t quanta = 0xffff;       // for every listed priority (0 = XON)
  double pps = 1000;                   // frames per second, paced on an absolute schedule
  double duration_s = 1;               // sends round(pps * duration_s) frames ...
  std::optional<std::uint64_t> count;  // ... unless a count is given
  std::optional<MacAddress> src_mac;   // default: the interface's own address
  bool end_with_xon = false;           // one more frame with quanta 0 when done (not counted)
};

struct InjectResult {
  std::uint64_t frames_sent = 0;  // XOFF (or the given quanta) frames, without the final XON
  std::uint64_t xon_sent = 0;
  std::int64_t first_ns = 0;  // wall clock of the first and last send (the XON included)
  std::int64_t last_ns = 0;
  std::uint32_t frame_bytes = 0;
  MacAddress src_mac{};           // the frames' source: the given one, else the interface's
  std::uint64_t late_frames = 0;  // frames sent more than one period behind their schedule
  std::string send_error;         // why sending stopped before the end ("" if it did not), e.g. the
                                  // interface went away; what was sent up to then is still counted
};

// Checks every option and throws rocehil::Error (bad input) naming the option and the fix: no
// interface, no PFC priority or one above 7, pps not above 0 or above 10M, a duration not above
// 0 (without a count) or shorter than one frame, a count of 0, a multicast source MAC.
void validate(const InjectOptions& options);

// Frames the options ask for: `count`, else round(pps * duration_s).
std::uint64_t frames_to_send(const InjectOptions& options);

// The absolute schedule: frame i is due at t0 + i / pps, its offset rounded up to a whole ns.
// frames_due(elapsed) is how many frames (at most `total`) are due `elapsed_ns` after t0, so
// frame i is due exactly when elapsed_ns >= scheduled_offset_ns(i).
std::int64_t scheduled_offset_ns(std::uint64_t index, double pps);
std::uint64_t frames_due(std::int64_t elapsed_ns, double pps, std::uint64_t total);

// The frame the options ask for, from `src_mac`; with `xon`, the same classes with quanta 0.
std::vector<std::uint8_t> pause_frame(const InjectOptions& options, const MacAddress& src_mac,
                                      bool xon);

// Sends through an AF_PACKET socket bound to the interface. Throws rocehil::Error when the
// interface does not exist, is down, has no link or is not Ethernet, or the socket cannot be
// opened (needs root/CAP_NET_RAW). A send failure after that ends sending: it is reported in
// `send_error`, with what went out before it.
// Returns early, with what was sent, once `stop` becomes true. `progress` (may be empty) is
// called with 0 once the interface is open, then about ten times a second with the frames sent
// so far, and once at the end.
InjectResult inject_pause_frames(const InjectOptions& options, const std::atomic<bool>& stop,
                                 const std::function<void(std::uint64_t)>& progress = {});

}  // namespace rocehil::capture
