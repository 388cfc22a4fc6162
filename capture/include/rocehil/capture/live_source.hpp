#pragma once

// A frame source fed by a network interface while it runs: libpcap on a Linux interface, or a
// DPDK port. Besides frames it must say what it failed to see, because a report that hides
// capture loss is wrong: coverage = captured / (captured + dropped), always reported.

#include "rocehil/capture/capture_point.hpp"
#include "rocehil/capture/frame_source.hpp"

namespace rocehil::capture {

class LiveSource : public FrameSource {
 public:
  // Blocks until at least one frame is there or the source is stopped; returns 0 only once
  // stopped (or, for a replayed file, at its end) and every frame before that was delivered.
  std::size_t next_batch(std::span<Frame> out) override = 0;
  // Ends the capture: the next_batch in progress returns soon. Safe from another thread; never
  // throws.
  virtual void stop() noexcept = 0;
  // Counters so far; exact once next_batch has returned 0.
  virtual CaptureCounters counters() = 0;
  virtual const InterfaceInfo& interface_info() const noexcept = 0;
  // True when the frames come from a file played back (DPDK net_pcap): their timestamps are the
  // file's, so the capture's own start and stop times say nothing about their window.
  virtual bool replays_a_file() const noexcept { return false; }
  // True when the source leaves out some frames of a remote mirror session (a capture filter run
  // inside the tunnel): the analyzer must not read the gaps in their sequence numbers as losses.
  virtual bool thins_mirror_sessions() const noexcept { return false; }
};

}  // namespace rocehil::capture
