#include "rocehil/capture/pcap_writer.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#include "rocehil/capture/frame.hpp"
#include "rocehil/common/error.hpp"

// Records go out in native byte order: readers detect the order from the magic numbers, and
// writing natively needs no byte swaps on the capture path.

namespace rocehil::capture {
namespace {

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

// A pcapng block built in memory: for the few blocks that carry options (not the per-frame path).
class Block {
 public:
  explicit Block(std::uint32_t type) { put32(type), put32(0); }
  void put16(std::uint16_t v) { append(&v, 2); }
  void put32(std::uint32_t v) { append(&v, 4); }
  void put64(std::uint64_t v) { append(&v, 8); }
  // An option: code, length, value, zero padding to 32 bits. Empty values are left out.
  void option(std::uint16_t code, const void* value, std::size_t size) {
    if (size == 0) return;
    put16(code);
    put16(static_cast<std::uint16_t>(size));
    append(value, size);
    bytes_.resize((bytes_.size() + 3) & ~std::size_t{3}, 0);
  }
  void option(std::uint16_t code, const std::string& text) {
    option(code, text.data(), std::min<std::size_t>(text.size(), 0xfff0));
  }
  void option64(std::uint16_t code, std::uint64_t v) { option(code, &v, 8); }
  // Timestamps are split like an EPB's: the high 32 bits, then the low 32 bits.
  void timestamp_option(std::uint16_t code, std::uint64_t ns) {
    const std::uint32_t words[2] = {static_cast<std::uint32_t>(ns >> 32),
                                    static_cast<std::uint32_t>(ns)};
    option(code, words, sizeof words);
  }
  // opt_endofopt, the trailing length, and the leading length patched in.
  const std::vector<std::uint8_t>& finish(bool had_options) {
    if (had_options) put32(0);
    const auto total = static_cast<std::uint32_t>(bytes_.size() + 4);
    put32(total);
    std::memcpy(bytes_.data() + 4, &total, 4);
    return bytes_;
  }

 private:
  void append(const void* p, std::size_t n) {
    const auto* b = static_cast<const std::uint8_t*>(p);
    bytes_.insert(bytes_.end(), b, b + n);
  }
  std::vector<std::uint8_t> bytes_;
};

std::vector<std::uint8_t> interface_block(std::uint32_t snaplen, const InterfaceInfo& iface) {
  Block b(1);
  b.put16(link_type::ethernet);
  b.put16(0);
  b.put32(snaplen);
  b.option(2, iface.name);                                   // if_name
  b.option(3, iface.description);                            // if_description
  if (iface.speed_bps != 0) b.option64(8, iface.speed_bps);  // if_speed
  const std::uint8_t ns_resolution = 9;
  b.option(9, &ns_resolution, 1);   // if_tsresol
  if (!iface.bpf_filter.empty()) {  // if_filter: first byte 0 = a libpcap filter string
    std::string value(1, '\0');
    value += iface.bpf_filter;
    b.option(11, value);
  }
  return b.finish(true);
}

}  // namespace

PcapWriter::PcapWriter(const std::string& path, FileFormat format, std::uint32_t snaplen,
                       const InterfaceInfo& iface)
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
    put(file_, h.data(), h.size());
    bytes_written_ += h.size();
    const std::vector<std::uint8_t> idb = interface_block(snaplen_, iface);
    put(file_, idb.data(), idb.size());
    bytes_written_ += idb.size();
    return;
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
  bytes_written_ += h.size();
}

void PcapWriter::write_statistics(const CaptureCounters& counters, std::uint64_t start_ns,
                                  std::uint64_t end_ns) {
  if (file_ == nullptr || format_ != FileFormat::pcapng) return;
  Block b(5);
  b.put32(0);  // interface 0
  b.put32(static_cast<std::uint32_t>(end_ns >> 32));
  b.put32(static_cast<std::uint32_t>(end_ns));
  b.timestamp_option(2, start_ns);                        // isb_starttime
  b.timestamp_option(3, end_ns);                          // isb_endtime
  b.option64(4, counters.captured + counters.dropped());  // isb_ifrecv
  b.option64(5, counters.dropped_interface);              // isb_ifdrop
  b.option64(7, counters.dropped_buffer);                 // isb_osdrop
  b.option64(8, counters.captured);                       // isb_usrdeliv
  const std::vector<std::uint8_t>& block = b.finish(true);
  put(file_, block.data(), block.size());
  bytes_written_ += block.size();
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
    bytes_written_ += total;
    return;
  }
  constexpr std::uint64_t ns_in_a_second = 1'000'000'000;
  const std::uint64_t sec = ts_ns / ns_in_a_second;
  const std::uint64_t frac = ts_ns % ns_in_a_second;
  h.put<std::uint32_t>(static_cast<std::uint32_t>(sec));
  h.put<std::uint32_t>(
      static_cast<std::uint32_t>(format_ == FileFormat::pcap_ns ? frac : frac / 1000));
  h.put<std::uint32_t>(caplen);
  h.put<std::uint32_t>(orig);
  put(file_, h.data(), h.size());
  put(file_, bytes.data(), caplen);
  bytes_written_ += h.size() + caplen;
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
