#pragma once

#include <cstdint>
#include <cstdio>
#include <span>
#include <string>

#include "rocehil/capture/file_source.hpp"

namespace rocehil::capture {

// Writes Ethernet frames to a pcap (us or ns) or pcapng (one section, one interface with
// if_tsresol 9) file in native byte order, through a large stdio buffer.
class PcapWriter {
 public:
  // Throws rocehil::Error naming the path when it cannot be created.
  PcapWriter(const std::string& path, FileFormat format, std::uint32_t snaplen = 262144);
  ~PcapWriter();  // closes; a failed final flush is reported by close(), not here
  PcapWriter(const PcapWriter&) = delete;
  PcapWriter& operator=(const PcapWriter&) = delete;

  // `bytes` is the frame as it was on the wire minus the FCS; at most snaplen bytes are stored and
  // the record's original length is wire_len (bytes.size() when 0).
  void write(std::uint64_t ts_ns, std::span<const std::uint8_t> bytes, std::uint32_t wire_len = 0);
  // Flushes and closes; throws rocehil::Error on a write failure (full disk).
  void close();

 private:
  std::string path_;
  FileFormat format_;
  std::uint32_t snaplen_;
  std::FILE* file_ = nullptr;
};

}  // namespace rocehil::capture
