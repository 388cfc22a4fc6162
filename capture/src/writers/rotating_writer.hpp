#pragma once

// A capture written as one pcapng file, or as a ring of files of bounded size: like tcpdump's
// -C/-W, a long capture keeps the newest N files of M bytes each and deletes older ones, so a
// nightly run cannot fill the capture host's disk.

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "rocehil/capture/capture_point.hpp"
#include "rocehil/capture/pcap_writer.hpp"

namespace rocehil::capture {

struct RotationOptions {
  std::string path;              // "out/spine1.pcapng"; ring files are "out/spine1-0001.pcapng"...
  std::uint32_t ring_files = 0;  // 0: one file at `path`, no rotation
  std::uint64_t file_bytes = 0;  // rotate when a file has reached this size (ring only)
  std::uint32_t snaplen = 128;
  InterfaceInfo iface;
};

class RotatingWriter {
 public:
  // Throws rocehil::Error when the first file cannot be created or the options are inconsistent.
  explicit RotatingWriter(const RotationOptions& options);
  ~RotatingWriter();
  RotatingWriter(const RotatingWriter&) = delete;
  RotatingWriter& operator=(const RotatingWriter&) = delete;

  // Throws rocehil::Error when a new ring file cannot be created (the frame is then lost and
  // counted in lost_frames()).
  void write(std::uint64_t ts_ns, std::span<const std::uint8_t> bytes, std::uint32_t wire_len);
  // Adds the statistics block to the current (last) file and closes it; throws on write errors.
  void close(const CaptureCounters& counters, std::uint64_t start_ns, std::uint64_t end_ns);

  // The files on disk, oldest first, and how many older ones the ring deleted.
  const std::vector<std::string>& files() const noexcept { return files_; }
  std::uint64_t files_deleted() const noexcept { return files_deleted_; }

  // The name of ring file `index` (1-based) for `path`: the number goes before the extension.
  static std::string ring_file_name(const std::string& path, std::uint64_t index);

 private:
  void open_next();

  RotationOptions options_;
  std::unique_ptr<PcapWriter> writer_;
  std::vector<std::string> files_;
  std::uint64_t next_index_ = 1;
  std::uint64_t files_deleted_ = 0;
};

}  // namespace rocehil::capture
