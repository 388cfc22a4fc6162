#pragma once

#include <cstdint>
#include <cstdio>
#include <span>
#include <string>

#include "rocehil/capture/capture_point.hpp"
#include "rocehil/capture/file_source.hpp"

namespace rocehil::capture {

// Writes Ethernet frames to a pcap (us or ns) or pcapng (one section, one interface with
// if_tsresol 9) file in native byte order, through a large stdio buffer. In pcapng the interface
// block also names the capture point (if_name, if_description, if_filter, if_speed) and
// write_statistics() records what the capture missed, so the file carries its own coverage.
class PcapWriter {
 public:
  // Throws rocehil::Error naming the path when it cannot be created.
  PcapWriter(const std::string& path, FileFormat format, std::uint32_t snaplen = 262144,
             const InterfaceInfo& iface = {});
  ~PcapWriter();  // closes; a failed final flush is reported by close(), not here
  PcapWriter(const PcapWriter&) = delete;
  PcapWriter& operator=(const PcapWriter&) = delete;

  // `bytes` is the frame as it was on the wire minus the FCS; at most snaplen bytes are stored and
  // the record's original length is wire_len (bytes.size() when 0).
  void write(std::uint64_t ts_ns, std::span<const std::uint8_t> bytes, std::uint32_t wire_len = 0);
  // pcapng only (ignored for pcap): an interface statistics block with the capture's start and
  // end (ns since the epoch) and its counters: isb_usrdeliv = captured, isb_osdrop = dropped in
  // the capture buffer, isb_ifdrop = dropped at the interface, isb_ifrecv = their sum.
  void write_statistics(const CaptureCounters& counters, std::uint64_t start_ns,
                        std::uint64_t end_ns);
  // Bytes handed to the file so far (headers included), for rotating to the next file.
  std::uint64_t bytes_written() const noexcept { return bytes_written_; }
  const std::string& path() const noexcept { return path_; }
  // Flushes and closes; throws rocehil::Error on a write failure (full disk).
  void close();

 private:
  std::string path_;
  FileFormat format_;
  std::uint32_t snaplen_;
  std::FILE* file_ = nullptr;
  std::uint64_t bytes_written_ = 0;
};

}  // namespace rocehil::capture
