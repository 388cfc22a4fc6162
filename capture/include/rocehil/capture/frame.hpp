#pragma once

#include <cstdint>

namespace rocehil::capture {

// Link types we meet in mirror captures (the pcap LINKTYPE_ numbers).
namespace link_type {
inline constexpr std::uint16_t ethernet = 1;
}

// One captured frame. `data` points into the source's buffer and stays valid until the next call
// to FrameSource::next_batch; copy what you keep.
struct Frame {
  std::uint64_t ts_ns = 0;     // capture timestamp, ns since the Unix epoch
  std::uint32_t caplen = 0;    // bytes present at `data` (cut by the snap length)
  std::uint32_t wire_len = 0;  // the frame's length on the wire (the record's original length)
  std::uint16_t link_type = link_type::ethernet;
  // The file's interface the frame came in on: its index in FileSource::interfaces() (every
  // section's, in file order); 0 for pcap files and live sources, which have one.
  std::uint32_t interface = 0;
  const std::uint8_t* data = nullptr;
};

}  // namespace rocehil::capture
