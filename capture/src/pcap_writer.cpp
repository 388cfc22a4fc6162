#include "rocehil/capture/pcap_writer.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "rocehil/capture/frame.hpp"
#include "rocehil/common/error.hpp"

// Records go out in native byte order: readers detect the order from the magic numbers, and
// writing natively needs no byte swaps on the capture path.

namespace rocehil::capture {
namespace {

constexpr std::uint64_t ns_per_s = 1'000'000'000;
constexpr std::size_t stdio_buffer = std::size_t{1} << 20;

class Out {
 public:
  template <typename T>
  void put(T v) noexcept {
    std::memcpy(bytes_ + size_, &v, sizeof v);
    size_ += sizeof v;
  }
  const std::uint8_t* data() const noexcept { return bytes_; }
  std::size_t size() const noexcept { return size_; }

 private:
  std::uint8_t bytes_[64];
  std::size_t size_ = 0;
};

// Writes all or records failure in the stream's error flag, which close() reports.
void put(std::FILE* f, const void* p, std::size_t n) noexcept {
  if (n != 0) std::fwrite(p, 1, n, f);
}

}  // namespace

PcapWriter::PcapWriter(const std::string& path, FileFormat format, std::uint32_t snaplen)
    : path_(path), format_(format), snaplen_(snaplen) {
  file_ = std::fopen(path.c_str(), "wbe");
  if (file_ == nullptr) throw system_error(path + ": cannot create the capture file", errno);
  // Capture writers see millions of small records; stdio's default buffer would mean a write(2)
  // every few of them.
  std::setvbuf(file_, nullptr, _IOFBF, stdio_buffer);

  Out h;
  if (format_ == FileFormat::pcapng) {
    // Section header block: no options, section length unknown (-1).
    h.put<std::uint32_t>(0x0A0D0D0A);
    h.put<std::uint32_t>(28);
    h.put<std::uint32_t>(0x1A2B3C4D);
    h.put<std::uint16_t>(1);
    h.put<std::uint16_t>(0);
    h.put<std::uint64_t>(~std::uint64_t{0});
    h.put<std::uint32_t>(28);
    // Interface description block: Ethernet, if_tsresol = 9 (ns), end of options.
    h.put<std::uint32_t>(1);
    h.put<std::uint32_t>(32);
    h.put<std::uint16_t>(link_type::ethernet);
    h.put<std::uint16_t>(0);
    h.put<std::uint32_t>(snaplen_);
    h.put<std::uint16_t>(9);
    h.put<std::uint16_t>(1);
    h.put<std::uint32_t>(9);  // the value byte, then three bytes of padding (zero either way)
    h.put<std::uint32_t>(0);
    h.put<std::uint32_t>(32);
  } else {
    h.put<std::uint32_t>(format_ == FileFormat::pcap_ns ? 0xa1b23c4d : 0xa1b2c3d4);
    h.put<std::uint16_t>(2);
    h.put<std::uint16_t>(4);
    h.put<std::int32_t>(0);
    h.put<std::uint32_t>(0);
    h.put<std::uint32_t>(snaplen_);
    h.put<std::uint32_t>(link_type::ethernet);
  }
  put(file_, h.data(), h.size());
}

PcapWriter::~PcapWriter() {
  if (file_ != nullptr) std::fclose(file_);
}

void PcapWriter::write(std::uint64_t ts_ns, std::span<const std::uint8_t> bytes,
                       std::uint32_t wire_len) {
  // After a failure, stop producing output; close() reports it.
  if (file_ == nullptr || std::ferror(file_)) return;
  const std::uint32_t caplen =
      static_cast<std::uint32_t>(std::min<std::size_t>(bytes.size(), snaplen_));
  const std::uint32_t orig = wire_len != 0 ? wire_len : static_cast<std::uint32_t>(bytes.size());

  Out h;
  if (format_ == FileFormat::pcapng) {
    const std::uint32_t padded = (caplen + 3u) & ~3u;
    const std::uint32_t total = 32 + padded;
    h.put<std::uint32_t>(6);
    h.put<std::uint32_t>(total);
    h.put<std::uint32_t>(0);
    h.put<std::uint32_t>(static_cast<std::uint32_t>(ts_ns >> 32));
    h.put<std::uint32_t>(static_cast<std::uint32_t>(ts_ns));
    h.put<std::uint32_t>(caplen);
    h.put<std::uint32_t>(orig);
    put(file_, h.data(), h.size());
    put(file_, bytes.data(), caplen);
    Out t;
    t.put<std::uint32_t>(0);  // padding; only padded - caplen bytes of it go out
    t.put<std::uint32_t>(total);
    put(file_, t.data() + 4 - (padded - caplen), 4 + (padded - caplen));
    return;
  }
  const std::uint64_t sec = ts_ns / ns_per_s;
  const std::uint64_t frac = ts_ns % ns_per_s;
  h.put<std::uint32_t>(static_cast<std::uint32_t>(sec));
  h.put<std::uint32_t>(
      static_cast<std::uint32_t>(format_ == FileFormat::pcap_ns ? frac : frac / 1000));
  h.put<std::uint32_t>(caplen);
  h.put<std::uint32_t>(orig);
  put(file_, h.data(), h.size());
  put(file_, bytes.data(), caplen);
}

void PcapWriter::close() {
  if (file_ == nullptr) return;
  std::FILE* f = file_;
  file_ = nullptr;
  // A failure inside an earlier fwrite leaves only the stream's error flag; the flush retries
  // the buffered bytes and usually yields the errno (ENOSPC, EIO) again.
  errno = 0;
  const bool flush_failed = std::fflush(f) != 0;
  int err = errno;
  const bool failed = flush_failed || std::ferror(f);
  const bool close_failed = std::fclose(f) != 0;
  if (err == 0 && close_failed) err = errno;
  if (failed || close_failed) {
    throw system_error(path_ + ": writing the capture file failed", err != 0 ? err : EIO);
  }
}

}  // namespace rocehil::capture
