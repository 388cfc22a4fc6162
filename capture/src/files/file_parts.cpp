#include "files/file_parts.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <vector>

#include "files/byte_window.hpp"
#include "files/file_source_impl.hpp"

namespace rocehil::capture {
using namespace file_detail;

namespace {

// Where a part may start is looked for in the first half of this window, and a candidate's
// chain of headers is followed through all of it.
constexpr std::size_t search_bytes = std::size_t{4} << 20;
constexpr std::size_t candidate_bytes = search_bytes / 2;
// Headers in a row that must be plausible (fewer where the file or the window ends first).
constexpr int chain_length = 8;

// Blocks only the boundary search needs to know of (the reader skips them).
constexpr std::uint32_t block_nrb = 4, block_isb = 5, block_dsb = 10;

class Fd {
 public:
  explicit Fd(const std::string& path) : fd_(::open(path.c_str(), O_RDONLY | O_CLOEXEC)) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  // Up to `len` bytes at `at`; fewer at the end of the file or on an error.
  std::vector<std::uint8_t> read(std::uint64_t at, std::size_t len) const {
    std::vector<std::uint8_t> out(len);
    std::size_t got = 0;
    while (fd_ >= 0 && got < len) {
      const ssize_t n = ::pread(fd_, out.data() + got, len - got, static_cast<off_t>(at + got));
      if (n <= 0) break;
      got += static_cast<std::size_t>(n);
    }
    out.resize(got);
    return out;
  }

 private:
  int fd_;
};

struct PcapShape {
  bool big;
  bool nano;
  std::uint64_t min_sec, max_sec;
};

// The length of the pcap record at b[at], or 0 when its header is not plausible there.
std::size_t pcap_record_at(const std::vector<std::uint8_t>& b, std::size_t at, const PcapShape& s) {
  if (b.size() - at < pcap_record_header) return 0;
  const std::uint8_t* p = b.data() + at;
  const std::uint64_t sec = ld32(p, s.big);
  const std::uint32_t frac = ld32(p + 4, s.big);
  const std::uint32_t caplen = ld32(p + 8, s.big);
  const std::uint32_t orig = ld32(p + 12, s.big);
  if (sec < s.min_sec || sec > s.max_sec) return 0;
  if (frac >= (s.nano ? 1'000'000'000u : 1'000'000u)) return 0;
  if (caplen > pcap_max_caplen || orig < caplen || orig > (std::uint32_t{16} << 20)) return 0;
  return pcap_record_header + caplen;
}

bool known_block(std::uint32_t type) {
  switch (type) {
    case block_idb:
    case block_pb:
    case block_spb:
    case block_nrb:
    case block_isb:
    case block_epb:
    case block_dsb: return true;
    default: return type == 0x00000BAD || type == 0x40000BAD;
  }
}

// The length of the pcapng block at b[at] with its trailing copy in the window, or 0.
std::size_t pcapng_block_at(const std::vector<std::uint8_t>& b, std::size_t at, bool big,
                            bool packet_only, std::size_t interfaces) {
  if (b.size() - at < 12) return 0;
  const std::uint8_t* p = b.data() + at;
  const std::uint32_t type = ld32(p, big);
  const bool packet = type == block_epb || type == block_spb || type == block_pb;
  if (packet_only ? !packet : !known_block(type)) return 0;
  const std::uint32_t len = ld32(p + 4, big);
  if (len % 4 != 0 ||
      len < (type == block_spb ? 16u
             : packet          ? 32u
                               : 12u) ||
      len > pcapng_max_block || len > b.size() - at)
    return 0;
  if (ld32(p + len - 4, big) != len) return 0;
  if (type == block_epb && ld32(p + 8, big) >= interfaces) return 0;
  if (type == block_epb && ld32(p + 20, big) > len - 32) return 0;
  return len;
}

// Follows a chain of plausible lengths from `at`: true when chain_length links hold, or when the
// chain ends exactly at the end of the file, or runs out of window after at least one link.
template <class Next>
bool chain_holds(std::size_t at, std::size_t window, bool window_is_file_end, Next next) {
  for (int links = 0; links < chain_length; ++links) {
    if (at == window) return window_is_file_end || links > 0;
    if (at > window || window - at < 16) return !window_is_file_end && links > 0;
    const std::size_t len = next(at, links == 0);
    if (len == 0) return false;
    at += len;
  }
  return true;
}

}  // namespace

std::unique_ptr<FileSource> FileParts::open_at(const std::string& path, const FileSource& like,
                                               std::uint64_t offset, std::uint64_t records_before) {
  const FileSource::Impl& from = *like.impl_;
  auto impl = std::make_unique<FileSource::Impl>(
      from.name, ByteWindow::open(path, from.name, WindowOptions{}));
  impl->format = from.format;
  impl->big = from.big;
  impl->fast = from.fast;
  impl->pcap_snaplen = from.pcap_snaplen;
  impl->pcap_link_type = from.pcap_link_type;
  impl->interfaces = from.interfaces;
  impl->described = from.described;  // so interfaces a later section adds are numbered on
  impl->records = records_before;
  impl->refill_at(offset, 16);
  if (impl->pos() != offset) impl->done = true;  // the file is shorter than that
  return std::unique_ptr<FileSource>(new FileSource(std::move(impl)));
}

void FileParts::stop_before(FileSource& source, std::uint64_t offset) noexcept {
  source.impl_->stop_at = offset;
}

bool FileParts::stopped_at_limit(const FileSource& source) noexcept {
  return source.impl_->at_stop;
}

void FileParts::read_on(FileSource& source) noexcept {
  FileSource::Impl& s = *source.impl_;
  s.stop_at = UINT64_MAX;
  if (s.at_stop) s.done = s.at_stop = false;
}

std::uint64_t FileParts::position(const FileSource& source) noexcept {
  return source.impl_->pos();
}

std::uint64_t FileParts::header_blocks(const FileSource& source) noexcept {
  return source.impl_->header_blocks;
}

std::optional<std::uint64_t> FileParts::find_boundary(const std::string& path,
                                                      const FileSource& like, std::uint64_t from,
                                                      std::uint64_t first_ts_ns) {
  const FileSource::Impl& s = *like.impl_;
  const Fd fd(path);
  const bool pcapng = s.format == FileFormat::pcapng;
  if (pcapng) from = (from + 3) & ~std::uint64_t{3};  // blocks are 32-bit aligned
  const std::vector<std::uint8_t> b = fd.read(from, search_bytes);
  const bool file_end = b.size() < search_bytes;
  const std::size_t candidates = std::min(b.size(), candidate_bytes);
  if (pcapng) {
    const auto next = [&](std::size_t at, bool first) {
      return pcapng_block_at(b, at, s.big, first, s.interfaces.size());
    };
    for (std::size_t at = 0; at < candidates; at += 4)
      if (chain_holds(at, b.size(), file_end, next)) return from + at;
    return std::nullopt;
  }
  // A pcap record's seconds lie within a day before the first record and a year after it.
  const std::uint64_t first_sec = first_ts_ns / ns_per_s;
  const PcapShape shape{s.big, s.format == FileFormat::pcap_ns,
                        first_sec > 86'400 ? first_sec - 86'400 : 0, first_sec + 366 * 86'400};
  const auto next = [&](std::size_t at, bool) { return pcap_record_at(b, at, shape); };
  for (std::size_t at = 0; at < candidates; ++at)
    if (chain_holds(at, b.size(), file_end, next)) return from + at;
  return std::nullopt;
}

}  // namespace rocehil::capture
