#pragma once

// The state of a FileSource, shared by the files that read it: file_source.cpp (opening, format
// detection, batches, the public API), pcap_records.cpp (classic pcap) and pcapng_blocks.cpp.
//
// Shape: a hot loop per format and byte order (templates) that takes only records lying whole
// inside the current window and passing every check, and a slow step that handles exactly one
// record or block of any kind, with the full checks and the messages. The slow step is the
// authority; the fast loop only skips work for the obviously good case. next_batch calls the fast
// loop through a member-function pointer once per run of good records, so each format's loop and
// step live in that format's file without costing anything per frame.
//
// Behaviour choices common to both formats (each format's file lists its own):
// - wire_len = max(original length, caplen), so consumers may rely on caplen <= wire_len.
// - A block or record that runs past the end of the input is "truncated" when its length is
//   plausible (a capture killed mid-write), "corrupt" when the length is beyond any limit.
// - A failed read() mid-file stops reading with a "truncated" problem whose detail names the
//   system error (FileProblem has no kind for it and next_batch never throws).
// - Files of every kind are read with read() into one small reused buffer (byte_window.hpp says
//   why that beats mapping), so a record is a pointer into that buffer until the next refill.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "files/byte_window.hpp"
#include "rocehil/capture/file_source.hpp"
#include "rocehil/common/byte_order.hpp"

namespace rocehil::capture {

namespace file_detail {

// What read_header needs to tell the formats apart; each format's file holds the rest of its
// constants.
constexpr std::uint32_t pcap_magic_us = 0xa1b2c3d4;
constexpr std::uint32_t pcap_magic_ns = 0xa1b23c4d;
constexpr std::size_t pcap_file_header = 24;
constexpr std::uint32_t block_shb = 0x0A0D0D0A;
// Shared with file_parts.cpp, which looks for record and block boundaries by the same limits.
constexpr std::size_t pcap_record_header = 16;
constexpr std::uint32_t pcap_max_caplen = 262144;  // libpcap's limit
constexpr std::uint32_t block_idb = 1;
constexpr std::uint32_t block_pb = 2;
constexpr std::uint32_t block_spb = 3;
constexpr std::uint32_t block_epb = 6;
constexpr std::uint32_t pcapng_max_block = std::uint32_t{16} << 20;

constexpr std::uint64_t ns_per_s = 1'000'000'000;

template <bool Big>
inline std::uint16_t ld16(const std::uint8_t* p) noexcept {
  return Big ? load_be16(p) : load_le16(p);
}
template <bool Big>
inline std::uint32_t ld32(const std::uint8_t* p) noexcept {
  return Big ? load_be32(p) : load_le32(p);
}
inline std::uint16_t ld16(const std::uint8_t* p, bool big) noexcept {
  return big ? load_be16(p) : load_le16(p);
}
inline std::uint32_t ld32(const std::uint8_t* p, bool big) noexcept {
  return big ? load_be32(p) : load_le32(p);
}
inline std::uint64_t ld64(const std::uint8_t* p, bool big) noexcept {
  return big ? static_cast<std::uint64_t>(load_be32(p)) << 32 | load_be32(p + 4)
             : static_cast<std::uint64_t>(load_le32(p + 4)) << 32 | load_le32(p);
}

__extension__ using u128 = unsigned __int128;

// Converts a pcapng interface's timestamp units to ns, exactly for every resolution that is a
// whole number of ns. Unsigned arithmetic throughout: garbage timestamps wrap, they are not UB.
struct TsScale {
  enum class Kind : std::uint8_t { mul, div, bin, zero };
  Kind kind = Kind::mul;
  unsigned shift = 0;
  std::uint64_t factor = 1000;  // pcapng's default resolution is 10^-6 s
  std::uint64_t offset_ns = 0;

  static TsScale from_tsresol(std::uint8_t v) noexcept {
    TsScale s;
    const unsigned n = v & 0x7fu;
    if (v & 0x80u) {
      s.kind = Kind::bin;
      s.shift = n;
    } else if (n <= 9) {
      s.kind = Kind::mul;
      s.factor = pow10(9 - n);
    } else if (n <= 28) {  // 10^(n-9) still fits in 64 bits
      s.kind = Kind::div;
      s.factor = pow10(n - 9);
    } else {
      s.kind = Kind::zero;
    }
    return s;
  }

  std::uint64_t to_ns(std::uint64_t units) const noexcept {
    std::uint64_t ns = 0;
    switch (kind) {
      case Kind::mul: ns = units * factor; break;
      case Kind::div: ns = units / factor; break;
      case Kind::bin: ns = static_cast<std::uint64_t>((u128{units} * ns_per_s) >> shift); break;
      case Kind::zero: break;
    }
    return ns + offset_ns;
  }

  static std::uint64_t pow10(unsigned n) noexcept {
    std::uint64_t r = 1;
    while (n-- > 0) r *= 10;
    return r;
  }
};

// A pcapng interface, as its interface description block defines it.
struct Interface {
  std::uint32_t described = 0;  // its index in FileSource::interfaces()
  std::uint16_t link_type = 0;
  std::uint32_t snaplen = 0;
  TsScale ts;
};

}  // namespace file_detail

struct FileSource::Impl {
  enum class Step { emitted, consumed, refill, stopped };
  using FastFn = std::size_t (Impl::*)(std::span<Frame>) noexcept;

  Impl(std::string source_name, ByteWindow window)
      : name(std::move(source_name)), win(std::move(window)) {}

  static std::unique_ptr<FileSource> make(std::string name, ByteWindow window);

  std::string name;
  ByteWindow win;
  FileFormat format = FileFormat::pcap_us;
  bool big = false;  // byte order of the file (pcap) or of the current section (pcapng)
  bool done = false;
  std::uint64_t records = 0;
  std::vector<FileProblem> problems;

  // The unread part of the window.
  const std::uint8_t* cur = nullptr;
  const std::uint8_t* end = nullptr;
  FastFn fast = nullptr;

  // Parts of a file read by several sources (file_parts.hpp): reading stops before the first
  // record or block that starts at or after stop_at.
  std::uint64_t stop_at = UINT64_MAX;
  bool at_stop = false;             // stopped there, not at the end or at a problem
  std::uint64_t header_blocks = 0;  // pcapng section headers and interface descriptions read

  std::uint32_t pcap_snaplen = 0;
  std::uint16_t pcap_link_type = 0;
  std::vector<file_detail::Interface> interfaces;  // of the current pcapng section
  std::vector<FileInterface> described;            // every section's, in file order
  std::uint32_t sections = 0;                      // pcapng section headers read

  std::uint64_t pos() const noexcept {
    return win.offset() + static_cast<std::uint64_t>(cur - win.data());
  }
  std::size_t avail() const noexcept { return static_cast<std::size_t>(end - cur); }

  // Makes `len` bytes from the current position visible; returns how many are. Only called with
  // no frames of the current batch outstanding, since it may move the window.
  std::size_t refill(std::size_t len) noexcept { return refill_at(pos(), len); }
  std::size_t refill_at(std::uint64_t at, std::size_t len) noexcept {
    const std::size_t got = win.ensure(at, len);
    if (at >= win.offset() && at - win.offset() <= win.size()) {
      cur = win.data() + (at - win.offset());
      end = win.data() + win.size();
    }
    return got;
  }

  void stop(FileProblem::Kind kind, std::uint64_t at, std::string detail);
  // The input ended (or failed) `got` bytes into the `part` that starts at `at`.
  void stop_short(std::uint64_t at, const std::string& where, const char* part, std::size_t got,
                  std::size_t need);

  // file_source.cpp
  void read_header();
  std::size_t next_batch(std::span<Frame> out);

  // pcap_records.cpp
  void read_pcap_header(bool nano);
  template <bool Big, bool Nano>
  std::size_t pcap_fast(std::span<Frame> out) noexcept;
  Step pcap_step(Frame& f, bool may_refill);

  // pcapng_blocks.cpp
  template <bool Big>
  std::size_t pcapng_fast(std::span<Frame> out) noexcept;
  void set_pcapng_fast() noexcept;
  std::string block_where(std::uint64_t at, std::uint32_t type) const;
  Step pcapng_step(Frame& f, bool may_refill);
  bool section_header(std::uint64_t at, const std::uint8_t* b);
  bool interface_description(std::uint64_t at, const std::uint8_t* b, std::uint32_t len);
};

}  // namespace rocehil::capture
