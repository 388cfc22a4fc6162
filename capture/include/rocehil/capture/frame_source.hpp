#pragma once

#include <cstddef>
#include <span>

#include "rocehil/capture/frame.hpp"

namespace rocehil::capture {

// Where frames come from: a capture file, a live libpcap handle, a DPDK port. Batches amortise
// the virtual call; a source fills up to out.size() frames and returns how many. 0 means the
// source is exhausted (a file's end, a stopped live capture). Frames stay valid until the next
// call. Never throws from next_batch: problems are recorded and reported by the source.
class FrameSource {
 public:
  virtual ~FrameSource() = default;
  virtual std::size_t next_batch(std::span<Frame> out) = 0;
};

}  // namespace rocehil::capture
