#include "rocehil/capture/frame_builder.hpp"

#include <gtest/gtest.h>

#include "addresses.hpp"
#include "hex.hpp"
#include "rocehil/common/icrc.hpp"
#include "rocehil/common/roce_wire.hpp"

namespace rocehil::capture {
namespace {

using testing::doc_v6;
using testing::from_hex;
using testing::v4;

TEST(FrameBuilder, ByteForByteWhatScapyBuilds) {
  RoceFrame f;
  f.bth = Bth{.opcode = wire::opcode::rc_write_only, .dest_qp = 0x101, .ack_req = true, .psn = 5};
  f.reth = Reth{.va = 0x10000, .rkey = 0x1234, .dma_length = 16};
  f.payload_size = 16;
  f.payload_fill = 0xab;
  EXPECT_EQ(build(f), from_hex(testing::scapy_write_only));
}

TEST(FrameBuilder, QinQNakByteForByte) {
  RoceFrame f;
  f.vlans = {{wire::ethertype::qinq, 100}, {wire::ethertype::vlan, 0x60c8}};
  f.src = v4(198, 18, 0, 3);
  f.dst = v4(198, 18, 0, 4);
  f.ecn = wire::ecn_ce;
  f.udp_src_port = 50000;
  f.bth = Bth{.opcode = wire::opcode::rc_acknowledge, .dest_qp = 0xabcdef, .psn = 0x123456};
  f.aeth = Aeth{.syndrome = wire::aeth::nak_remote_access_error, .msn = 0x102};
  EXPECT_EQ(build(f), from_hex(testing::scapy_qinq_nak));
}

TEST(FrameBuilder, SizesAndTooSmallBuffer) {
  RoceFrame f;
  f.payload_size = 4096;
  EXPECT_EQ(frame_size(f), 14 + 20 + 8 + 12 + 16 + 4096 + 4u);
  std::vector<std::uint8_t> small(frame_size(f) - 1);
  EXPECT_EQ(build(f, small), 0u);
  EXPECT_EQ(build(cnp_frame(v4(1, 1, 1, 1), v4(2, 2, 2, 2), 1)).size(), 14 + 20 + 8 + 12 + 16 + 4u);
}

TEST(FrameBuilder, Ipv6IcrcCoversThePacket) {
  RoceFrame f;
  f.src = doc_v6(1);
  f.dst = doc_v6(2);
  f.payload_size = 100;
  const auto frame = build(f);
  const auto ip = std::span<const std::uint8_t>(frame).subspan(14, frame.size() - 14 - 4);
  EXPECT_EQ(wire::load_icrc(frame.data() + frame.size() - 4), wire::icrc(ip).value());
}

TEST(FrameBuilder, PfcAndPauseLayout) {
  const auto pfc = build_pfc(0x0009, {1, 2, 3, 4, 5, 6, 7, 8});
  ASSERT_EQ(pfc.size(), 60u);
  EXPECT_EQ(std::vector<std::uint8_t>(pfc.begin(), pfc.begin() + 6),
            (std::vector<std::uint8_t>{0x01, 0x80, 0xc2, 0x00, 0x00, 0x01}));
  EXPECT_EQ(pfc[12], 0x88);
  EXPECT_EQ(pfc[13], 0x08);
  EXPECT_EQ(pfc[14], 0x01);
  EXPECT_EQ(pfc[15], 0x01);
  EXPECT_EQ(pfc[17], 0x09);
  EXPECT_EQ(pfc[18 + 2 * 7 + 1], 8);
  const auto pause = build_pause(0xffff);
  EXPECT_EQ(pause[15], 0x01);
  EXPECT_EQ(pause[16], 0xff);
  EXPECT_EQ(pause[17], 0xff);
}

}  // namespace
}  // namespace rocehil::capture
