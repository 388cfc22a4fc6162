#pragma once

#include <array>
#include <cstdint>

#include "soft/pause_frame.hpp"

namespace rocehil::traffic::soft {

// The pause state of a port's 8 priorities, on the caller's clock (nanoseconds), as a ConnectX's
// MAC keeps it: a frame for a priority (re)starts its timer at quanta x 512 bit times of the
// port's speed, replacing what was left (a refresh can lengthen or shorten it), and quanta 0
// (XON) ends it at once. It also counts what mlx5's `ethtool -S` shows per priority: the frames
// received (XON included) and the time the priority was paused.
//
// Only the priorities with PFC on (`obeyed`, bit P for priority P: what `mlnx_qos --pfc` sets on
// a ConnectX) stop; a frame for another is counted, since it did arrive, and ignored, as a
// ConnectX without PFC on that priority ignores it. 802.3x PAUSE names all eight and is held to
// the same mask.
class PriorityPause {
 public:
  static constexpr std::size_t priorities = 8;

  // `port_gbps` > 0: the speed a quantum is measured at.
  explicit PriorityPause(double port_gbps, std::uint8_t obeyed = 0xff) noexcept
      : ns_per_quantum_(512.0 / port_gbps), obeyed_(obeyed) {}

  void on_frame(const PauseRequest& request, std::uint64_t now_ns) noexcept {
    if (request.link_pause) ++link_pause_frames_;
    for (std::size_t p = 0; p < priorities; ++p) {
      if ((request.priorities & (1u << p)) == 0) continue;
      ++frames_[p];
      if ((obeyed_ & (1u << p)) == 0) continue;
      const std::uint64_t length = pause_ns(request.quanta[p]);
      if (now_ns >= until_[p]) {
        // Not paused: the previous pause, over now, joins the total; a new one starts here.
        closed_ns_[p] += until_[p] - since_[p];
        since_[p] = until_[p] = now_ns;
      }
      until_[p] = now_ns + length;
    }
  }

  std::uint8_t obeyed() const noexcept { return obeyed_; }

  bool paused(std::size_t priority, std::uint64_t now_ns) const noexcept {
    return now_ns < until_[priority];
  }
  // When the priority's current pause ends (a time already past when it is not paused).
  std::uint64_t resumes_at(std::size_t priority) const noexcept { return until_[priority]; }

  // PFC and PAUSE frames received that named the priority, XON included.
  std::uint64_t frames(std::size_t priority) const noexcept { return frames_[priority]; }
  // 802.3x PAUSE frames received.
  std::uint64_t link_pause_frames() const noexcept { return link_pause_frames_; }
  // Time the priority has been paused up to `now_ns`, the pause in force included.
  std::uint64_t paused_ns(std::size_t priority, std::uint64_t now_ns) const noexcept {
    const std::uint64_t end = now_ns < until_[priority] ? now_ns : until_[priority];
    return closed_ns_[priority] + (end > since_[priority] ? end - since_[priority] : 0);
  }

  std::uint64_t pause_ns(std::uint16_t quanta) const noexcept {
    return static_cast<std::uint64_t>(quanta * ns_per_quantum_ + 0.5);
  }

 private:
  double ns_per_quantum_;
  std::uint8_t obeyed_;
  // The current (or last) pause of each priority is [since, until); those before it are summed
  // in closed_ns.
  std::array<std::uint64_t, priorities> since_{}, until_{}, closed_ns_{}, frames_{};
  std::uint64_t link_pause_frames_ = 0;
};

}  // namespace rocehil::traffic::soft
