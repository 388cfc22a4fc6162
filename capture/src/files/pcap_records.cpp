// Classic pcap: the file header, the hot loop over records and the slow step for one record.
//
// Behaviour choices (file_source_impl.hpp lists those common to both formats):
// - Records with caplen above 262144 are corrupt (libpcap's limit); caplen above a smaller snap
//   length is tolerated, since writers that lie about the snap length exist.

#include <fmt/format.h>

#include <algorithm>

#include "files/file_source_impl.hpp"
#include "rocehil/common/error.hpp"

namespace rocehil::capture {
using namespace file_detail;

// Called by read_header once the magic said pcap; `big` is already set from it.
void FileSource::Impl::read_pcap_header(bool nano) {
  const std::size_t have = avail();
  if (have < pcap_file_header) {
    throw input_error(fmt::format(
        "{}: the file ends inside the pcap file header ({} of 24 bytes); the capture was "
        "cut off before its first packet",
        name, have));
  }
  format = nano ? FileFormat::pcap_ns : FileFormat::pcap_us;
  pcap_snaplen = ld32(cur + 16, big);
  // The upper bits of the link type field carry FCS information, not the link type.
  pcap_link_type = static_cast<std::uint16_t>(ld32(cur + 20, big) & 0xffffu);
  cur += pcap_file_header;
  if (big) {
    fast = nano ? &Impl::pcap_fast<true, true> : &Impl::pcap_fast<true, false>;
  } else {
    fast = nano ? &Impl::pcap_fast<false, true> : &Impl::pcap_fast<false, false>;
  }
}

template <bool Big, bool Nano>
std::size_t FileSource::Impl::pcap_fast(std::span<Frame> out) noexcept {
  const std::uint8_t* p = cur;
  const std::uint8_t* const e = end;
  const std::uint16_t lt = pcap_link_type;
  std::size_t n = 0;
  while (n < out.size() && static_cast<std::size_t>(e - p) >= pcap_record_header) {
    const std::uint32_t caplen = ld32<Big>(p + 8);
    if (caplen > pcap_max_caplen || caplen > static_cast<std::size_t>(e - p) - pcap_record_header) {
      break;
    }
    const std::uint32_t orig = ld32<Big>(p + 12);
    Frame& f = out[n++];
    f.ts_ns = ld32<Big>(p) * ns_per_s + ld32<Big>(p + 4) * std::uint64_t{Nano ? 1 : 1000};
    f.caplen = caplen;
    f.wire_len = orig > caplen ? orig : caplen;
    f.link_type = lt;
    f.interface = 0;
    f.data = p + pcap_record_header;
    p += pcap_record_header + caplen;
  }
  cur = p;
  records += n;
  return n;
}

FileSource::Impl::Step FileSource::Impl::pcap_step(Frame& f, bool may_refill) {
  const std::uint64_t at = pos();
  std::size_t have = avail();
  if (have < pcap_record_header) {
    if (!may_refill) return Step::refill;
    have = refill(pcap_record_header);
    if (have == 0 && win.error() == 0) {
      done = true;
      return Step::stopped;
    }
    if (have < pcap_record_header) {
      stop_short(at, fmt::format("record {} at byte {}", records + 1, at), "record header", have,
                 pcap_record_header);
      return Step::stopped;
    }
  }
  const std::uint32_t caplen = ld32(cur + 8, big);
  if (caplen > pcap_max_caplen) {
    stop(FileProblem::Kind::corrupt, at,
         fmt::format("record {} at byte {}: captured length {} exceeds {}", records + 1, at, caplen,
                     pcap_max_caplen));
    return Step::stopped;
  }
  const std::size_t need = pcap_record_header + caplen;
  if (have < need) {
    if (!may_refill) return Step::refill;
    have = refill(need);
    if (have < need) {
      stop_short(at, fmt::format("record {} at byte {}", records + 1, at), "record", have, need);
      return Step::stopped;
    }
  }
  const std::uint32_t orig = ld32(cur + 12, big);
  const std::uint64_t frac = ld32(cur + 4, big);
  f.ts_ns = ld32(cur, big) * ns_per_s + (format == FileFormat::pcap_ns ? frac : frac * 1000);
  f.caplen = caplen;
  f.wire_len = std::max(orig, caplen);
  f.link_type = pcap_link_type;
  f.interface = 0;
  f.data = cur + pcap_record_header;
  cur += need;
  ++records;
  return Step::emitted;
}

}  // namespace rocehil::capture
