#pragma once

// A remote mirror session sends its frames behind the same tunnel headers, frame after frame:
// the same Ethernet types, IP addresses and protocol, GRE flags and key, ERSPAN version,
// session, frame type and timestamp granularity. Only a handful of fields change (IP length,
// ID and checksum, GRE sequence number, the mirrored frame's VLAN and port, the T bit and the
// timestamp). MirrorTemplate learns one session's headers from a frame locate_layers() found
// to be a well-formed mirror, then recognises the session's next frames by comparing their
// header bytes, bar those fields, against it: the tunnel is then opened without reading it
// field by field, and its header read without searching for the fields. This is what keeps
// frames through a tunnel close to the speed of the same frames unwrapped.
//
// Exactness: every byte the field-by-field path (locate_gre(), read_mirror_header()) decides
// by is compared, and the one field it also decides by that changes, the IP length, is judged
// again; a frame it would judge differently does not match and takes that path.

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>

#include "frames/frame_layout.hpp"
#include "frames/mirror_layout.hpp"
#include "rocehil/capture/decode.hpp"
#include "rocehil/common/byte_order.hpp"

namespace rocehil::capture {

class MirrorTemplate {
 public:
  // Tunnel headers up to this long are learned (IPv6 with VLAN tags, GRE with every option and
  // ERSPAN III with its subheader take 98 bytes).
  static constexpr std::uint32_t max_header_size = 128;

  // Learns the headers of `d`, located by locate_layers() as a remote mirror that is not
  // malformed, in place of any learned before. Returns false, with nothing learned, where the
  // headers are longer than max_header_size.
  bool learn(const std::uint8_t* d, std::uint32_t caplen, const FrameLayout& l) noexcept {
    forget();
    const std::uint32_t size = l.l2;
    if (l.mirror == MirrorKind::none || l.kind == FrameKind::mirror_malformed ||
        size <= first_compared || size > max_header_size || size > caplen)
      return false;
    std::array<std::uint8_t, max_header_size> mask{};
    keep(mask, 12, size);  // the MAC addresses decide nothing
    for (std::uint32_t tag = 14; tag + 4 <= l.outer_l3; tag += 4) skip(mask, tag, 2);  // TCI
    const std::uint32_t ip = l.outer_l3;
    if (l.outer_ip_version == 4) {
      // Version and IHL | DSCP and ECN, length, ID | flags and offset | TTL | protocol | sum
      mask[ip] = 0xff;
      skip(mask, ip + 1, 5);
      skip(mask, ip + 8, 1);
      skip(mask, ip + 10, 2);
      length_at_ = ip + 2;
      length_base_ = ip;
    } else {
      // Version (4 bits), traffic class and flow label | payload length | next | hop limit
      mask[ip] = 0xf0;
      skip(mask, ip + 1, 5);
      skip(mask, ip + 7, 1);
      length_at_ = ip + 4;
      length_base_ = ip + 40;
    }
    header_ = MirrorHeader{};
    read_mirror_header(d, caplen, l, header_);
    const std::uint16_t flags = load_be16(d + l.gre);
    std::uint32_t off = l.gre + 4;
    if (flags & mirror_wire::gre_checksum) {
      skip(mask, off, 4);  // checksum and reserved
      off += 4;
    }
    if (flags & mirror_wire::gre_key) off += 4;
    // Fields a session lacks are read from the GRE header, which every mirror has, and masked
    // to 0: reading them takes no branch.
    const Field absent{l.gre, 0};
    sequence_ = erspan_word_ = timestamp_ = port_ = seconds_ = absent;
    if (flags & mirror_wire::gre_sequence) {
      skip(mask, off, 4);
      sequence_ = {off, 0xffffffff};
      off += 4;
    }
    if (l.mirror == MirrorKind::erspan2 || l.mirror == MirrorKind::erspan3) {
      // Version | VLAN, COS, En, T | session ID
      erspan_word_ = {off, 0x0fff0400};  // VLAN and T
      mask[off] = 0xf0;
      mask[off + 1] = 0;
      mask[off + 2] = 0x03;
      if (l.mirror == MirrorKind::erspan2) {
        skip(mask, off + 4, 4);  // reserved and port index
        port_ = {off + 4, 0xfffff};
      } else {
        skip(mask, off + 4, 6);  // timestamp, SGT
        mask[off + 10] = 0x7c;   // frame type (P and the hardware ID are not read)
        mask[off + 11] = 0x07;   // granularity and O (the direction is not counted)
        timestamp_ = {off + 4, 0xffffffff};
        if (d[off + 11] & 1) {  // O: the platform-specific subheader follows
          const std::uint32_t sub = off + mirror_wire::erspan3_header_size;
          mask[sub] = 0xfc;  // the platform ID decides what the rest says
          skip(mask, sub + 1, 7);
          if (header_.platform_id == 1) port_ = {sub + 4, 0xffffffff};
          if (header_.platform_id == 3) {
            port_ = {sub, 0x3fff};
            seconds_ = {sub + 4, 0xffffffff};
          }
        }
      }
    }
    // Compared from the first byte that decides anything (the MAC addresses decide nothing),
    // 16 bytes at a time, at least min_chunks times.
    const std::uint32_t chunks =
        std::max<std::uint32_t>(min_chunks, (size - first_compared + 15) / 16);
    for (std::uint32_t i = 0; i < chunks * 16; ++i) {
      const std::uint32_t at = first_compared + i;
      bytes_[i] = at < size ? d[at] & mask[at] : 0;
      masks_[i] = at < size ? mask[at] : 0;
    }
    needed_ =
        std::max<std::uint32_t>(first_compared + chunks * 16, size + wire::ethernet_header_size);
    layout_ = FrameLayout{};
    layout_.mirror = l.mirror;
    layout_.outer_ip_version = l.outer_ip_version;
    layout_.outer_l3 = l.outer_l3;
    layout_.gre = l.gre;
    layout_.l2 = l.l2;
    chunks_ = chunks;
    return true;
  }

  void forget() noexcept {
    chunks_ = 0;
    needed_ = nothing_learned;
  }

  // Whether `d` carries the learned session's headers. `out` is then the tunnel's part of what
  // locate_layers() gives for it; locate_frame() adds the mirrored frame's layers. False leaves
  // `out` as it was.
  bool open(const std::uint8_t* d, std::uint32_t caplen, FrameLayout& out) const noexcept {
    const std::uint32_t l2 = layout_.l2;
    if (caplen < needed_) return false;
    // The first three chunks always (most headers fit them; the masks past a header are zero),
    // so that the compiler unrolls them.
    Chunk differ = (chunk(d, 0) & mask(0)) ^ want(0);
    for (std::uint32_t i = 1; i < min_chunks; ++i) differ |= (chunk(d, i) & mask(i)) ^ want(i);
    for (std::uint32_t i = min_chunks; i < chunks_; ++i)
      differ |= (chunk(d, i) & mask(i)) ^ want(i);
    std::uint64_t halves[2];
    std::memcpy(halves, &differ, 16);
    if ((halves[0] | halves[1]) != 0) return false;
    // The one field the tunnel is judged by that changes: a packet shorter than its headers and
    // an Ethernet header is a broken mirror, which the field-by-field path reports.
    const std::uint32_t ip_end = length_base_ + load_be16(d + length_at_);
    if (ip_end < l2 + wire::ethernet_header_size) return false;
    out = layout_;
    out.carried = ip_end - l2;
    out.end = ip_end < caplen ? ip_end : caplen;
    return true;
  }

  // open() and locate_frame(): what locate_layers() gives for a frame of the learned session.
  bool match(const std::uint8_t* d, std::uint32_t caplen, FrameLayout& out) const noexcept {
    if (!open(d, caplen, out)) return false;
    locate_frame(d, out);
    return true;
  }

  // The learned session's header: what a frame open() accepted has in its headers, but for
  // the fields read() reads and two no count uses (COS and the direction, D).
  const MirrorHeader& header() const noexcept { return header_; }

  // The fields of a frame open() accepted that change from frame to frame.
  MirrorFrameFields read(const std::uint8_t* d) const noexcept {
    MirrorFrameFields v;
    const std::uint32_t word = erspan_word_.read(d);
    v.sequence = sequence_.read(d);
    v.vlan = static_cast<std::uint16_t>(word >> 16);
    v.truncated = (word & 0x400) != 0;
    v.timestamp = timestamp_.read(d);
    v.port_index = port_.read(d);
    v.seconds = seconds_.read(d);
    return v;
  }

 private:
  static void keep(std::array<std::uint8_t, max_header_size>& mask, std::uint32_t from,
                   std::uint32_t to) noexcept {
    for (std::uint32_t i = from; i < to; ++i) mask[i] = 0xff;
  }
  static void skip(std::array<std::uint8_t, max_header_size>& mask, std::uint32_t at,
                   std::uint32_t n) noexcept {
    for (std::uint32_t i = at; i < at + n && i < max_header_size; ++i) mask[i] = 0;
  }

  // 16 bytes compared at once (SSE2, NEON): the vector extension GCC and Clang share.
  using Chunk = std::uint64_t __attribute__((vector_size(16)));
  static constexpr std::uint32_t first_compared = 12;  // the Ethernet type
  static Chunk load(const std::uint8_t* p) noexcept {
    Chunk c;
    std::memcpy(&c, p, 16);
    return c;
  }
  static Chunk chunk(const std::uint8_t* d, std::uint32_t i) noexcept {
    return load(d + first_compared + 16 * i);
  }
  Chunk mask(std::uint32_t i) const noexcept { return load(masks_.data() + 16 * i); }
  Chunk want(std::uint32_t i) const noexcept { return load(bytes_.data() + 16 * i); }

  static constexpr std::uint32_t min_chunks = 3;
  static constexpr std::uint32_t nothing_learned = 0xffffffff;

  // The learned headers from first_compared on, masked, and the mask: chunks_ chunks of 16
  // bytes (0: none learned).
  alignas(16) std::array<std::uint8_t, max_header_size> bytes_{};
  alignas(16) std::array<std::uint8_t, max_header_size> masks_{};
  std::uint32_t chunks_ = 0;
  // The bytes a frame needs for open() to look at it: the chunks compared, and the headers with
  // an Ethernet header after them (nothing_learned: none).
  std::uint32_t needed_ = nothing_learned;
  FrameLayout layout_;   // the tunnel's part of the layout
  MirrorHeader header_;  // the learned frame's header: the fields that stay, and their kind
  std::uint32_t length_at_ = 0, length_base_ = 0;  // IP length field; where it counts from
  // A 32-bit field of the headers, at a fixed offset, and its bits.
  struct Field {
    std::uint32_t at = 0;
    std::uint32_t mask = 0;
    std::uint32_t read(const std::uint8_t* d) const noexcept { return load_be32(d + at) & mask; }
  };
  Field sequence_, erspan_word_, timestamp_, port_, seconds_;
};

}  // namespace rocehil::capture
