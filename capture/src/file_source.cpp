#include "rocehil/capture/file_source.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include "byte_window.hpp"
#include "rocehil/common/byte_order.hpp"
#include "rocehil/common/error.hpp"

// Reader for pcap and pcapng. Shape: a hot loop per format and byte order (templates) that takes
// only records lying whole inside the current window and passing every check, and a slow step
// that handles exactly one record or block of any kind, with the full checks and the messages.
// The slow step is the authority; the fast loop only skips work for the obviously good case.
//
// Behaviour choices:
// - wire_len = max(original length, caplen), so consumers may rely on caplen <= wire_len.
// - pcap records with caplen above 262144 are corrupt (libpcap's limit); caplen above a smaller
//   snap length is tolerated, since writers that lie about the snap length exist.
// - pcapng: blocks the reader must hold whole (SHB, IDB, EPB, SPB, PB) may be at most 16 MiB;
//   other blocks of any length are skipped after checking their trailing length copy.
// - A block or record that runs past the end of the input is "truncated" when its length is
//   plausible (a capture killed mid-write), "corrupt" when the length is beyond any limit.
// - SPB: ts_ns 0, interface 0, caplen = min(original length, block space, snap length if set).
// - Timestamps round toward zero when the resolution is finer than 1 ns or a power of two.
// - A failed read() mid-file stops reading with a "truncated" problem whose detail names the
//   system error (FileProblem has no kind for it and next_batch never throws).
// - Files of every kind are read with read() into one small reused buffer (byte_window.hpp says
//   why that beats mapping), so a record is a pointer into that buffer until the next refill.

namespace rocehil::capture {
namespace {

constexpr std::uint32_t pcap_magic_us = 0xa1b2c3d4;
constexpr std::uint32_t pcap_magic_ns = 0xa1b23c4d;
constexpr std::size_t pcap_file_header = 24;
constexpr std::size_t pcap_record_header = 16;
constexpr std::uint32_t pcap_max_caplen = 262144;

constexpr std::uint32_t block_shb = 0x0A0D0D0A;
constexpr std::uint32_t block_idb = 1;
constexpr std::uint32_t block_pb = 2;
constexpr std::uint32_t block_spb = 3;
constexpr std::uint32_t block_epb = 6;
constexpr std::uint32_t byte_order_magic = 0x1A2B3C4D;
constexpr std::uint32_t pcapng_max_block = std::uint32_t{16} << 20;
constexpr std::size_t pcapng_max_interfaces = std::size_t{1} << 20;
constexpr std::uint16_t opt_endofopt = 0;
constexpr std::uint16_t opt_if_tsresol = 9;
constexpr std::uint16_t opt_if_tsoffset = 14;

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

struct Interface {
  std::uint16_t link_type = 0;
  std::uint32_t snaplen = 0;
  TsScale ts;
};

const char* block_name(std::uint32_t type) {
  switch (type) {
    case block_shb: return "section header block";
    case block_idb: return "interface description block";
    case block_pb: return "packet block";
    case block_spb: return "simple packet block";
    case block_epb: return "enhanced packet block";
    default: return nullptr;
  }
}

std::uint32_t min_block_length(std::uint32_t type) {
  switch (type) {
    case block_shb: return 28;
    case block_idb: return 20;
    case block_pb: return 32;
    case block_spb: return 16;
    case block_epb: return 32;
    default: return 12;
  }
}

bool is_packet_block(std::uint32_t type) {
  return type == block_epb || type == block_spb || type == block_pb;
}

// Blocks whose contents the reader uses and therefore holds whole in the window.
bool is_held_block(std::uint32_t type) {
  return is_packet_block(type) || type == block_shb || type == block_idb;
}

}  // namespace

const char* to_string(FileFormat format) {
  switch (format) {
    case FileFormat::pcap_us: return "pcap-us";
    case FileFormat::pcap_ns: return "pcap-ns";
    case FileFormat::pcapng: return "pcapng";
  }
  return "unknown";
}

struct FileSource::Impl {
  enum class Step { emitted, consumed, refill, stopped };
  using FastFn = std::size_t (Impl::*)(std::span<Frame>) noexcept;

  Impl(std::string source_name, ByteWindow window)
      : name(std::move(source_name)), win(std::move(window)) {}

  static std::unique_ptr<FileSource> make(std::string name, ByteWindow window) {
    auto impl = std::make_unique<Impl>(std::move(name), std::move(window));
    impl->read_header();
    return std::unique_ptr<FileSource>(new FileSource(std::move(impl)));
  }

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

  std::uint32_t pcap_snaplen = 0;
  std::uint16_t pcap_link_type = 0;
  std::vector<Interface> interfaces;  // of the current pcapng section

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

  void stop(FileProblem::Kind kind, std::uint64_t at, std::string detail) {
    done = true;
    problems.push_back(FileProblem{kind, at, records + 1, std::move(detail)});
  }
  // The input ended (or failed) `got` bytes into the `part` that starts at `at`.
  void stop_short(std::uint64_t at, const std::string& where, const char* part, std::size_t got,
                  std::size_t need) {
    std::string detail = win.error() != 0
                             ? fmt::format("{}: reading the {} failed after {} of {} bytes: {}",
                                           where, part, got, need, std::strerror(win.error()))
                             : fmt::format("{}: the file ends inside the {} ({} of {} bytes)",
                                           where, part, got, need);
    stop(FileProblem::Kind::truncated, at, std::move(detail));
  }

  // ---- file header --------------------------------------------------------------------------

  void read_header() {
    refill_at(0, pcap_file_header);
    const std::size_t have = avail();
    if (have == 0) {
      if (win.error() != 0) throw system_error(name + ": cannot read", win.error());
      throw input_error(name +
                        ": the file is empty; a capture holds at least a pcap or pcapng header "
                        "(was the capture stopped before it wrote anything?)");
    }
    if (have < 4) {
      throw input_error(fmt::format(
          "{}: the file is only {} bytes long; not a pcap or pcapng file (they start with a "
          "header of at least 24 bytes)",
          name, have));
    }
    const std::uint32_t le = load_le32(cur);
    const std::uint32_t be = load_be32(cur);
    if (le == pcap_magic_us || le == pcap_magic_ns || be == pcap_magic_us || be == pcap_magic_ns) {
      big = be == pcap_magic_us || be == pcap_magic_ns;
      const bool nano = (big ? be : le) == pcap_magic_ns;
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
      return;
    }
    if (le == block_shb) {
      format = FileFormat::pcapng;
      Frame unused;
      pcapng_step(unused, true);
      if (!problems.empty()) {
        const FileProblem& p = problems.front();
        if (p.kind == FileProblem::Kind::truncated && win.error() != 0) {
          throw system_error(name + ": cannot read", win.error());
        }
        throw input_error(fmt::format("{}: not a readable pcapng file: {}", name, p.detail));
      }
      return;
    }
    throw input_error(fmt::format(
        "{}: not a pcap or pcapng file (first 4 bytes 0x{:08x}); rocehil analyze reads pcap and "
        "pcapng captures",
        name, be));
  }

  // ---- pcap ---------------------------------------------------------------------------------

  template <bool Big, bool Nano>
  std::size_t pcap_fast(std::span<Frame> out) noexcept {
    const std::uint8_t* p = cur;
    const std::uint8_t* const e = end;
    const std::uint16_t lt = pcap_link_type;
    std::size_t n = 0;
    while (n < out.size() && static_cast<std::size_t>(e - p) >= pcap_record_header) {
      const std::uint32_t caplen = ld32<Big>(p + 8);
      if (caplen > pcap_max_caplen ||
          caplen > static_cast<std::size_t>(e - p) - pcap_record_header) {
        break;
      }
      const std::uint32_t orig = ld32<Big>(p + 12);
      Frame& f = out[n++];
      f.ts_ns = ld32<Big>(p) * ns_per_s + ld32<Big>(p + 4) * std::uint64_t{Nano ? 1 : 1000};
      f.caplen = caplen;
      f.wire_len = orig > caplen ? orig : caplen;
      f.link_type = lt;
      f.data = p + pcap_record_header;
      p += pcap_record_header + caplen;
    }
    cur = p;
    records += n;
    return n;
  }

  Step pcap_step(Frame& f, bool may_refill) {
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
           fmt::format("record {} at byte {}: captured length {} exceeds {}", records + 1, at,
                       caplen, pcap_max_caplen));
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
    f.data = cur + pcap_record_header;
    cur += need;
    ++records;
    return Step::emitted;
  }

  // ---- pcapng -------------------------------------------------------------------------------

  template <bool Big>
  std::size_t pcapng_fast(std::span<Frame> out) noexcept {
    const std::uint8_t* p = cur;
    const std::uint8_t* const e = end;
    const Interface* const ifs = interfaces.data();
    const std::size_t nif = interfaces.size();
    std::size_t n = 0;
    while (n < out.size()) {
      const std::size_t have = static_cast<std::size_t>(e - p);
      if (have < 32) break;
      const std::uint32_t len = ld32<Big>(p + 4);
      if (ld32<Big>(p) != block_epb || len < 32 || len > have || (len & 3u) != 0 ||
          ld32<Big>(p + len - 4) != len) {
        break;
      }
      const std::uint32_t ifid = ld32<Big>(p + 8);
      const std::uint32_t caplen = ld32<Big>(p + 20);
      if (ifid >= nif || caplen > len - 32) break;
      const Interface& i = ifs[ifid];
      const std::uint32_t orig = ld32<Big>(p + 24);
      Frame& f = out[n++];
      f.ts_ns = i.ts.to_ns(static_cast<std::uint64_t>(ld32<Big>(p + 12)) << 32 | ld32<Big>(p + 16));
      f.caplen = caplen;
      f.wire_len = orig > caplen ? orig : caplen;
      f.link_type = i.link_type;
      f.data = p + 28;
      p += len;
    }
    cur = p;
    records += n;
    return n;
  }

  void set_pcapng_fast() noexcept {
    fast = big ? &Impl::pcapng_fast<true> : &Impl::pcapng_fast<false>;
  }

  std::string block_where(std::uint64_t at, std::uint32_t type) const {
    const char* what = block_name(type);
    const std::string kind = what ? std::string(what) : fmt::format("block type 0x{:08x}", type);
    if (is_packet_block(type))
      return fmt::format("record {} at byte {} ({})", records + 1, at, kind);
    return fmt::format("block at byte {} ({})", at, kind);
  }

  Step pcapng_step(Frame& f, bool may_refill) {
    const std::uint64_t at = pos();
    std::size_t have = avail();
    if (have < 12) {
      if (!may_refill) return Step::refill;
      have = refill(12);
      if (have == 0 && win.error() == 0) {
        done = true;
        return Step::stopped;
      }
      if (have < 12) {
        stop_short(at, fmt::format("block at byte {}", at), "block header", have, 12);
        return Step::stopped;
      }
    }

    // The section header's type reads the same in both byte orders; its byte-order magic decides
    // how everything after it, its own length included, is read.
    const std::uint32_t type = ld32(cur, big);
    bool order = big;
    if (type == block_shb) {
      const std::uint32_t bom = load_le32(cur + 8);
      if (bom == byte_order_magic) {
        order = false;
      } else if (load_be32(cur + 8) == byte_order_magic) {
        order = true;
      } else {
        stop(FileProblem::Kind::corrupt, at,
             fmt::format("{}: unknown byte-order magic 0x{:08x}", block_where(at, type),
                         load_be32(cur + 8)));
        return Step::stopped;
      }
    }
    const std::uint32_t len = ld32(cur + 4, order);
    if (len % 4 != 0) {
      stop(FileProblem::Kind::corrupt, at,
           fmt::format("{}: total length {} is not a multiple of 4", block_where(at, type), len));
      return Step::stopped;
    }
    if (len < min_block_length(type)) {
      stop(FileProblem::Kind::corrupt, at,
           fmt::format("{}: total length {} is below the minimum of {}", block_where(at, type), len,
                       min_block_length(type)));
      return Step::stopped;
    }
    const bool held = is_held_block(type);
    if (held && len > pcapng_max_block) {
      stop(FileProblem::Kind::corrupt, at,
           fmt::format("{}: total length {} exceeds the limit of {}", block_where(at, type), len,
                       pcapng_max_block));
      return Step::stopped;
    }

    if (have < len) {
      if (!may_refill) return Step::refill;
      if (held) {
        have = refill(len);
        if (have < len) {
          stop_short(at, block_where(at, type), "block", have, len);
          return Step::stopped;
        }
      } else {
        // Skip without holding the block: look only at its trailing length copy.
        const std::uint64_t trailer = at + len - 4;
        const std::size_t got = refill_at(trailer, 4);
        if (got < 4) {
          if (win.error() != 0) {
            stop(FileProblem::Kind::truncated, at,
                 fmt::format("{}: reading the block failed: {}", block_where(at, type),
                             std::strerror(win.error())));
          } else {
            stop(len > pcapng_max_block ? FileProblem::Kind::corrupt : FileProblem::Kind::truncated,
                 at,
                 fmt::format("{}: total length {} runs past the end of the file",
                             block_where(at, type), len));
          }
          return Step::stopped;
        }
        const std::uint32_t copy = ld32(cur, order);
        if (copy != len) {
          stop(FileProblem::Kind::corrupt, at,
               fmt::format("{}: trailing length {} disagrees with the leading length {}",
                           block_where(at, type), copy, len));
          return Step::stopped;
        }
        cur += 4;
        return Step::consumed;
      }
    }

    const std::uint8_t* const b = cur;
    const std::uint32_t copy = ld32(b + len - 4, order);
    if (copy != len) {
      stop(FileProblem::Kind::corrupt, at,
           fmt::format("{}: trailing length {} disagrees with the leading length {}",
                       block_where(at, type), copy, len));
      return Step::stopped;
    }

    Step result = Step::consumed;
    switch (type) {
      case block_shb:
        if (!section_header(at, b)) return Step::stopped;
        big = order;
        interfaces.clear();
        set_pcapng_fast();
        break;
      case block_idb:
        if (!interface_description(at, b, len)) return Step::stopped;
        break;
      case block_epb:
      case block_pb: {
        const std::uint32_t ifid = type == block_epb ? ld32(b + 8, big) : ld16(b + 8, big);
        if (ifid >= interfaces.size()) {
          stop(FileProblem::Kind::corrupt, at,
               fmt::format("{}: interface {} is not defined (the section defines {})",
                           block_where(at, type), ifid, interfaces.size()));
          return Step::stopped;
        }
        const std::uint32_t caplen = ld32(b + 20, big);
        if (caplen > len - 32) {
          stop(FileProblem::Kind::corrupt, at,
               fmt::format("{}: captured length {} exceeds the block's {} bytes of packet space",
                           block_where(at, type), caplen, len - 32));
          return Step::stopped;
        }
        const Interface& i = interfaces[ifid];
        const std::uint32_t orig = ld32(b + 24, big);
        f.ts_ns =
            i.ts.to_ns(static_cast<std::uint64_t>(ld32(b + 12, big)) << 32 | ld32(b + 16, big));
        f.caplen = caplen;
        f.wire_len = std::max(orig, caplen);
        f.link_type = i.link_type;
        f.data = b + 28;
        result = Step::emitted;
        break;
      }
      case block_spb: {
        if (interfaces.empty()) {
          stop(FileProblem::Kind::corrupt, at,
               fmt::format("{}: the section defines no interface", block_where(at, type)));
          return Step::stopped;
        }
        const Interface& i = interfaces.front();
        const std::uint32_t orig = ld32(b + 8, big);
        std::uint32_t caplen = std::min(orig, len - 16);
        if (i.snaplen != 0) caplen = std::min(caplen, i.snaplen);
        f.ts_ns = 0;
        f.caplen = caplen;
        f.wire_len = orig;
        f.link_type = i.link_type;
        f.data = b + 12;
        result = Step::emitted;
        break;
      }
      default: break;
    }
    cur = b + len;
    if (result == Step::emitted) ++records;
    return result;
  }

  bool section_header(std::uint64_t at, const std::uint8_t* b) {
    const bool order = load_le32(b + 8) != byte_order_magic;
    const std::uint16_t major = ld16(b + 12, order);
    const std::uint16_t minor = ld16(b + 14, order);
    if (major != 1) {
      stop(FileProblem::Kind::corrupt, at,
           fmt::format("{}: pcapng version {}.{} is not supported (rocehil reads version 1)",
                       block_where(at, block_shb), major, minor));
      return false;
    }
    return true;
  }

  bool interface_description(std::uint64_t at, const std::uint8_t* b, std::uint32_t len) {
    if (interfaces.size() >= pcapng_max_interfaces) {
      stop(FileProblem::Kind::corrupt, at,
           fmt::format("{}: more than {} interfaces in one section", block_where(at, block_idb),
                       pcapng_max_interfaces));
      return false;
    }
    Interface i;
    i.link_type = ld16(b + 8, big);
    i.snaplen = ld32(b + 12, big);
    std::uint64_t offset_s = 0;
    const std::uint8_t* o = b + 16;
    const std::uint8_t* const oe = b + len - 4;
    while (oe - o >= 4) {
      const std::uint16_t code = ld16(o, big);
      const std::uint16_t olen = ld16(o + 2, big);
      if (code == opt_endofopt) break;
      const std::size_t padded = (std::size_t{olen} + 3) & ~std::size_t{3};
      if (padded > static_cast<std::size_t>(oe - o) - 4) {
        stop(FileProblem::Kind::corrupt, at,
             fmt::format("{}: option {} of length {} runs past the end of the block",
                         block_where(at, block_idb), code, olen));
        return false;
      }
      if (code == opt_if_tsresol || code == opt_if_tsoffset) {
        const std::uint16_t want = code == opt_if_tsresol ? 1 : 8;
        if (olen != want) {
          stop(FileProblem::Kind::corrupt, at,
               fmt::format("{}: option {} has length {} instead of {}", block_where(at, block_idb),
                           code == opt_if_tsresol ? "if_tsresol" : "if_tsoffset", olen, want));
          return false;
        }
        if (code == opt_if_tsresol) {
          i.ts = TsScale::from_tsresol(o[4]);
        } else {
          offset_s = ld64(o + 4, big);  // signed seconds; two's complement wraps correctly below
        }
      }
      o += 4 + padded;
    }
    i.ts.offset_ns = offset_s * ns_per_s;
    interfaces.push_back(i);
    return true;
  }

  // ---- batches ------------------------------------------------------------------------------

  std::size_t next_batch(std::span<Frame> out) {
    std::size_t n = 0;
    while (!done && n < out.size()) {
      n += (this->*fast)(out.subspan(n));
      if (n == out.size()) break;
      // Frames already in this batch point into the window, so the window moves only at the
      // start of a batch: a record that needs a refill ends the batch early instead.
      const Step s =
          format == FileFormat::pcapng ? pcapng_step(out[n], n == 0) : pcap_step(out[n], n == 0);
      if (s == Step::emitted) {
        ++n;
      } else if (s != Step::consumed) {
        break;
      }
    }
    return n;
  }
};

std::unique_ptr<FileSource> open_file_source(const std::string& path,
                                             const WindowOptions& options) {
  std::string name = path == "-" ? std::string("<stdin>") : path;
  ByteWindow window = ByteWindow::open(path, name, options);
  return FileSource::Impl::make(std::move(name), std::move(window));
}

std::unique_ptr<FileSource> FileSource::open(const std::string& path) {
  return open_file_source(path, WindowOptions{});
}

std::unique_ptr<FileSource> FileSource::from_memory(std::span<const std::uint8_t> bytes,
                                                    const std::string& name) {
  return Impl::make(name, ByteWindow::memory(bytes));
}

FileSource::FileSource(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
FileSource::~FileSource() = default;

std::size_t FileSource::next_batch(std::span<Frame> out) {
  return impl_->next_batch(out);
}
FileFormat FileSource::format() const noexcept {
  return impl_->format;
}
const std::string& FileSource::name() const noexcept {
  return impl_->name;
}
std::uint64_t FileSource::records() const noexcept {
  return impl_->records;
}
const std::vector<FileProblem>& FileSource::problems() const noexcept {
  return impl_->problems;
}
std::uint64_t FileSource::bytes_consumed() const noexcept {
  return impl_->pos();
}
std::uint64_t FileSource::size_hint() const noexcept {
  return impl_->win.input_size();
}

}  // namespace rocehil::capture
