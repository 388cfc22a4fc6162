#include "writers/rotating_writer.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>

#include "rocehil/common/error.hpp"

namespace rocehil::capture {

std::string RotatingWriter::ring_file_name(const std::string& path, std::uint64_t index) {
  const std::size_t slash = path.find_last_of('/');
  const std::size_t dot = path.find_last_of('.');
  const bool has_extension =
      dot != std::string::npos && dot != 0 && (slash == std::string::npos || dot > slash + 1);
  if (!has_extension) return fmt::format("{}-{:04}", path, index);
  return fmt::format("{}-{:04}{}", path.substr(0, dot), index, path.substr(dot));
}

RotatingWriter::RotatingWriter(const RotationOptions& options) : options_(options) {
  if (options_.path.empty()) throw input_error("--write: name the pcapng file to write");
  if (options_.ring_files > 0 && options_.file_bytes == 0)
    throw input_error("--ring-files needs --ring-mb: the size at which to start the next file");
  if (options_.ring_files == 0 && options_.file_bytes != 0)
    throw input_error("--ring-mb needs --ring-files: how many files the ring keeps");
  open_next();
}

RotatingWriter::~RotatingWriter() = default;

void RotatingWriter::open_next() {
  if (options_.ring_files == 0) {
    writer_ = std::make_unique<PcapWriter>(options_.path, FileFormat::pcapng, options_.snaplen,
                                           options_.iface);
    files_.push_back(options_.path);
    return;
  }
  if (writer_) writer_->close();
  writer_.reset();
  const std::string name = ring_file_name(options_.path, next_index_++);
  writer_ =
      std::make_unique<PcapWriter>(name, FileFormat::pcapng, options_.snaplen, options_.iface);
  files_.push_back(name);
  while (files_.size() > options_.ring_files) {
    // A file already gone (removed by hand) is no reason to stop capturing.
    if (::unlink(files_.front().c_str()) != 0 && errno != ENOENT)
      throw system_error(files_.front() + ": cannot delete the oldest ring file", errno);
    files_.erase(files_.begin());
    ++files_deleted_;
  }
}

void RotatingWriter::write(std::uint64_t ts_ns, std::span<const std::uint8_t> bytes,
                           std::uint32_t wire_len) {
  if (options_.ring_files != 0 && writer_->bytes_written() >= options_.file_bytes) open_next();
  writer_->write(ts_ns, bytes, wire_len);
}

void RotatingWriter::close(const CaptureCounters& counters, std::uint64_t start_ns,
                           std::uint64_t end_ns) {
  if (!writer_) return;
  writer_->write_statistics(counters, start_ns, end_ns);
  std::unique_ptr<PcapWriter> last = std::move(writer_);
  last->close();
}

}  // namespace rocehil::capture
