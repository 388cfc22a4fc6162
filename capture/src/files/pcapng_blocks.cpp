// pcapng: the hot loop over enhanced packet blocks, the slow step for one block of any kind, and
// what the section header and interface description blocks set up (byte order, interfaces with
// their if_tsresol and if_tsoffset).
//
// Behaviour choices (file_source_impl.hpp lists those common to both formats):
// - Blocks the reader must hold whole (SHB, IDB, EPB, SPB, PB) may be at most 16 MiB; other
//   blocks of any length are skipped after checking their trailing length copy.
// - SPB: ts_ns 0, interface 0, caplen = min(original length, block space, snap length if set).
// - Timestamps round toward zero when the resolution is finer than 1 ns or a power of two.

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "files/file_source_impl.hpp"

namespace rocehil::capture {
using namespace file_detail;

namespace {

constexpr std::uint32_t byte_order_magic = 0x1A2B3C4D;
constexpr std::size_t pcapng_max_interfaces = std::size_t{1} << 20;
constexpr std::uint16_t opt_endofopt = 0;
constexpr std::uint16_t opt_if_tsresol = 9;
constexpr std::uint16_t opt_if_tsoffset = 14;
constexpr std::uint16_t opt_if_name = 2;
constexpr std::uint16_t opt_if_speed = 8;

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

template <bool Big>
std::size_t FileSource::Impl::pcapng_fast(std::span<Frame> out) noexcept {
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
    f.interface = i.described;
    f.data = p + 28;
    p += len;
  }
  cur = p;
  records += n;
  return n;
}

void FileSource::Impl::set_pcapng_fast() noexcept {
  fast = big ? &Impl::pcapng_fast<true> : &Impl::pcapng_fast<false>;
}

std::string FileSource::Impl::block_where(std::uint64_t at, std::uint32_t type) const {
  const char* what = block_name(type);
  const std::string kind = what ? std::string(what) : fmt::format("block type 0x{:08x}", type);
  if (is_packet_block(type)) return fmt::format("record {} at byte {} ({})", records + 1, at, kind);
  return fmt::format("block at byte {} ({})", at, kind);
}

FileSource::Impl::Step FileSource::Impl::pcapng_step(Frame& f, bool may_refill) {
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
      ++header_blocks;
      ++sections;
      big = order;
      interfaces.clear();
      set_pcapng_fast();
      break;
    case block_idb:
      if (!interface_description(at, b, len)) return Step::stopped;
      ++header_blocks;
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
      f.ts_ns = i.ts.to_ns(static_cast<std::uint64_t>(ld32(b + 12, big)) << 32 | ld32(b + 16, big));
      f.caplen = caplen;
      f.wire_len = std::max(orig, caplen);
      f.link_type = i.link_type;
      f.interface = i.described;
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
      f.interface = i.described;
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

bool FileSource::Impl::section_header(std::uint64_t at, const std::uint8_t* b) {
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

bool FileSource::Impl::interface_description(std::uint64_t at, const std::uint8_t* b,
                                             std::uint32_t len) {
  if (interfaces.size() >= pcapng_max_interfaces) {
    stop(FileProblem::Kind::corrupt, at,
         fmt::format("{}: more than {} interfaces in one section", block_where(at, block_idb),
                     pcapng_max_interfaces));
    return false;
  }
  Interface i;
  i.described = static_cast<std::uint32_t>(described.size());
  i.link_type = ld16(b + 8, big);
  i.snaplen = ld32(b + 12, big);
  FileInterface info{.section = sections == 0 ? 0 : sections - 1,
                     .index = static_cast<std::uint32_t>(interfaces.size()),
                     .name = {},
                     .speed_bps = 0};
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
    } else if (code == opt_if_speed && olen == 8) {
      info.speed_bps = ld64(o + 4, big);
    } else if (code == opt_if_name) {
      info.name.assign(reinterpret_cast<const char*>(o + 4), olen);
      while (!info.name.empty() && info.name.back() == '\0') info.name.pop_back();
    }
    o += 4 + padded;
  }
  i.ts.offset_ns = offset_s * ns_per_s;
  interfaces.push_back(i);
  described.push_back(std::move(info));
  return true;
}

}  // namespace rocehil::capture
