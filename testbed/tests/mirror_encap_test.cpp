#include "rocehil/testbed/mirror_encap.hpp"

#include <gtest/gtest.h>

#include <array>
#include <vector>

namespace rocehil::testbed {
namespace {

using Bytes = std::vector<std::uint8_t>;

Bytes header(MirrorMode mode, int session, const MirroredFrame& f) {
  std::array<std::uint8_t, max_encap_header_bytes> out{};
  out.fill(0xee);  // anything left unwritten shows
  const std::size_t n = write_encap_header(mode, session, f, out);
  EXPECT_EQ(n, encap_header_bytes(mode));
  return Bytes(out.begin(), out.begin() + static_cast<long>(n));
}

std::uint32_t word(const Bytes& b, std::size_t at) {
  return std::uint32_t{b[at]} << 24 | std::uint32_t{b[at + 1]} << 16 |
         std::uint32_t{b[at + 2]} << 8 | b[at + 3];
}

// The bits of the 32-bit word at `at` that differ between two headers: where a field sits.
std::uint32_t changed(const Bytes& a, const Bytes& b, std::size_t at) {
  return word(a, at) ^ word(b, at);
}

TEST(MirrorEncap, ErspanTypeThreeAsWrittenByHand) {
  MirroredFrame f;
  f.sequence = 0x01020304;
  f.truncated = true;
  f.port_index = 5;
  f.egress = true;
  f.cos = 3;
  f.seconds = 0x5f5e1000;
  f.nanoseconds = 123456789;  // 0x075bcd15
  const Bytes expected = {
      0x10, 0x00, 0x22, 0xeb,  // GRE: S; protocol ERSPAN type III
      0x01, 0x02, 0x03, 0x04,  // sequence
      0x20, 0x00, 0x64, 0x01,  // Ver 2, VLAN 0 | COS 3, BSO 0, T 1, session 1
      0x07, 0x5b, 0xcd, 0x15,  // timestamp: the nanoseconds
      0x00, 0x00, 0x80, 0x0d,  // SGT 0 | P 1, FT 0, HW ID 0, D 1, Gra 0b10, O 1
      0x0c, 0x00, 0x00, 0x05,  // Platf ID 3, reserved, port index 5
      0x5f, 0x5e, 0x10, 0x00,  // timestamp: the seconds
  };
  EXPECT_EQ(header(MirrorMode::erspan3, 1, f), expected);
}

TEST(MirrorEncap, ErspanTypeTwoAsWrittenByHand) {
  MirroredFrame f;
  f.sequence = 0;
  f.port_index = 0xabcde;
  f.cos = 6;
  const Bytes expected = {
      0x10, 0x00, 0x88, 0xbe,  // GRE: S; protocol ERSPAN type II
      0x00, 0x00, 0x00, 0x00,  // sequence 0
      0x10, 0x00, 0xc3, 0xff,  // Ver 1, VLAN 0 | COS 6, En 0, T 0, session 1023
      0x00, 0x0a, 0xbc, 0xde,  // reserved | index 0xabcde
  };
  EXPECT_EQ(header(MirrorMode::erspan2, 1023, f), expected);
}

TEST(MirrorEncap, GreTransparentEthernetBridgingAsWrittenByHand) {
  MirroredFrame f;
  f.sequence = 7;
  f.truncated = true;  // GRE has no bit for it
  const Bytes expected = {
      0x30, 0x00, 0x65, 0x58,  // GRE: K and S; protocol transparent Ethernet bridging
      0x00, 0x00, 0x00, 0x02,  // key: the session
      0x00, 0x00, 0x00, 0x07,  // sequence, after the key (RFC 2890)
  };
  EXPECT_EQ(header(MirrorMode::gre, 2, f), expected);
  EXPECT_EQ(encap_header_bytes(MirrorMode::local), 0u);
}

// Each field moved alone from 0 to its largest value changes exactly its bits, at the masks
// Wireshark's ERSPAN dissector reads (erspan.version 0xf000 and the others, per 16-bit half).
TEST(MirrorEncap, EachErspanFieldSitsAtItsBits) {
  const MirroredFrame zero;
  const Bytes base3 = header(MirrorMode::erspan3, 0, zero);
  const Bytes base2 = header(MirrorMode::erspan2, 0, zero);
  EXPECT_EQ(word(base3, 8) >> 28, 2u);  // Ver 2: type III
  EXPECT_EQ(word(base2, 8) >> 28, 1u);  // Ver 1: type II
  EXPECT_EQ(word(base3, 8) & 0x0fffffffu, 0u);
  EXPECT_EQ(word(base2, 8) & 0x0fffffffu, 0u);

  EXPECT_EQ(changed(base3, header(MirrorMode::erspan3, 1023, zero), 8), 0x3ffu);  // session
  EXPECT_EQ(changed(base2, header(MirrorMode::erspan2, 1023, zero), 8), 0x3ffu);

  MirroredFrame f = zero;
  f.truncated = true;  // T
  EXPECT_EQ(changed(base3, header(MirrorMode::erspan3, 0, f), 8), 0x400u);
  EXPECT_EQ(changed(base2, header(MirrorMode::erspan2, 0, f), 8), 0x400u);
  f = zero;
  f.cos = 7;
  EXPECT_EQ(changed(base3, header(MirrorMode::erspan3, 0, f), 8), 0xe000u);
  EXPECT_EQ(changed(base2, header(MirrorMode::erspan2, 0, f), 8), 0xe000u);

  f = zero;
  f.nanoseconds = 999'999'999;
  EXPECT_EQ(word(header(MirrorMode::erspan3, 0, f), 12), 999'999'999u);
  f = zero;
  f.seconds = 0xffffffff;
  EXPECT_EQ(changed(base3, header(MirrorMode::erspan3, 0, f), 24), 0xffffffffu);

  // Word 3: SGT 0xffff0000, P 0x8000, FT 0x7c00, HW ID 0x03f0, D 0x8, Gra 0x6, O 0x1.
  EXPECT_EQ(word(base3, 16), 0x00008005u);  // P 1, FT 0, HW ID 0, D 0, Gra 0b10, O 1
  f = zero;
  f.egress = true;
  EXPECT_EQ(changed(base3, header(MirrorMode::erspan3, 0, f), 16), 0x8u);

  // Platform subheader: Platf ID 0xfc000000 (3), reserved 0x03ffc000, port 0x3fff.
  EXPECT_EQ(word(base3, 20), 0x0c000000u);
  f = zero;
  f.port_index = 0x3fff;
  EXPECT_EQ(changed(base3, header(MirrorMode::erspan3, 0, f), 20), 0x3fffu);
  f.port_index = 0xfffff;  // wider than 14 bits: the low bits only
  EXPECT_EQ(changed(base3, header(MirrorMode::erspan3, 0, f), 20), 0x3fffu);
  // Type II: reserved 0xfff00000, index 0x000fffff.
  EXPECT_EQ(changed(base2, header(MirrorMode::erspan2, 0, f), 12), 0xfffffu);

  f = zero;
  f.sequence = 0xffffffff;
  EXPECT_EQ(changed(base3, header(MirrorMode::erspan3, 0, f), 4), 0xffffffffu);
  EXPECT_EQ(changed(base2, header(MirrorMode::erspan2, 0, f), 4), 0xffffffffu);
  const Bytes gre = header(MirrorMode::gre, 0, zero);
  EXPECT_EQ(changed(gre, header(MirrorMode::gre, 0, f), 8), 0xffffffffu);
  EXPECT_EQ(changed(gre, header(MirrorMode::gre, 1023, zero), 4), 0x3ffu);
}

TEST(MirrorEncap, AFrameKeepsWhatOnePacketHolds) {
  // 1500-byte management MTU: IPv4 20, then the headers.
  EXPECT_EQ(frame_bytes_kept(MirrorMode::erspan3, 1500, 0), 1500u - 20 - 28);
  EXPECT_EQ(frame_bytes_kept(MirrorMode::erspan2, 1500, 0), 1500u - 20 - 16);
  EXPECT_EQ(frame_bytes_kept(MirrorMode::gre, 1500, 0), 1500u - 20 - 12);
  EXPECT_EQ(frame_bytes_kept(MirrorMode::erspan3, 1500, 128), 128u);
  EXPECT_EQ(frame_bytes_kept(MirrorMode::erspan3, 1500, 9000), 1452u);
  EXPECT_EQ(frame_bytes_kept(MirrorMode::gre, 9000, 0), 9000u - 32);
  EXPECT_EQ(frame_bytes_kept(MirrorMode::erspan3, 40, 0), 0u);
}

Bytes ethernet(std::uint16_t type, Bytes rest) {
  Bytes f(12, 0x02);
  f.push_back(static_cast<std::uint8_t>(type >> 8));
  f.push_back(static_cast<std::uint8_t>(type));
  f.insert(f.end(), rest.begin(), rest.end());
  return f;
}

TEST(MirrorEncap, CosIsTheTagsPriorityElseTheIpPrecedence) {
  EXPECT_EQ(frame_cos(ethernet(0x0800, {0x45, 0x68})), 3);  // DSCP 26, ECT(0): RoCEv2 data
  EXPECT_EQ(frame_cos(ethernet(0x0800, {0x45, 0xc0})), 6);  // DSCP 48: CNP
  EXPECT_EQ(frame_cos(ethernet(0x0800, {0x45, 0x00})), 0);
  EXPECT_EQ(frame_cos(ethernet(0x86dd, {0x6c, 0x00})), 6);  // IPv6 traffic class 0xc0
  EXPECT_EQ(frame_cos(ethernet(0x8100, {0xa0, 0x05, 0x08, 0x00, 0x45, 0xc0})), 5);  // PCP 5
  EXPECT_EQ(frame_cos(ethernet(0x0806, {0x00, 0x01})), 0);                          // ARP
  EXPECT_EQ(frame_cos(ethernet(0x0800, {})), 0);                                    // cut short
  EXPECT_EQ(frame_cos(Bytes(6, 0)), 0);
}

}  // namespace
}  // namespace rocehil::testbed
