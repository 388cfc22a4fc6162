#include "rocehil/capture/decode.hpp"

#include <gtest/gtest.h>

#include "addresses.hpp"
#include "decode_exact.hpp"
#include "hex.hpp"
#include "rocehil/capture/frame_builder.hpp"
#include "rocehil/common/roce_wire.hpp"

namespace rocehil::capture {
namespace {

using testing::decode;
using testing::doc_v6;
using testing::from_hex;
using testing::v4;

TEST(Decode, ScapyWriteOnlyWithReth) {
  const DecodedFrame d = decode(from_hex(testing::scapy_write_only));
  ASSERT_EQ(d.kind, FrameKind::roce);
  EXPECT_EQ(d.ip_version, 4);
  EXPECT_EQ(d.dscp, 26);
  EXPECT_EQ(d.ecn, 0b10);
  EXPECT_EQ(d.src, v4(198, 18, 0, 1));
  EXPECT_EQ(d.dst, v4(198, 18, 0, 2));
  EXPECT_EQ(d.udp_src_port, 49152);
  EXPECT_EQ(d.udp_length, 56);
  EXPECT_EQ(d.bth.opcode, wire::opcode::rc_write_only);
  EXPECT_EQ(d.bth.pkey, 0xffff);
  EXPECT_EQ(d.bth.dest_qp, 0x101u);
  EXPECT_TRUE(d.bth.ack_req);
  EXPECT_FALSE(d.bth.becn);
  EXPECT_EQ(d.bth.psn, 5u);
  ASSERT_TRUE(d.has_reth);
  EXPECT_EQ(d.reth.va, 0x10000u);
  EXPECT_EQ(d.reth.rkey, 0x1234u);
  EXPECT_EQ(d.reth.dma_length, 16u);
  EXPECT_FALSE(d.has_aeth);
  EXPECT_FALSE(d.has_immdt);
}

TEST(Decode, ScapyQinQNakWithAeth) {
  const DecodedFrame d = decode(from_hex(testing::scapy_qinq_nak));
  ASSERT_EQ(d.kind, FrameKind::roce);
  EXPECT_EQ(d.vlan_tags, 2);
  EXPECT_EQ(d.vlan_id, 200);  // the innermost tag
  EXPECT_EQ(d.ecn, wire::ecn_ce);
  EXPECT_EQ(d.bth.opcode, wire::opcode::rc_acknowledge);
  EXPECT_EQ(d.bth.dest_qp, 0xabcdefu);
  EXPECT_EQ(d.bth.psn, 0x123456u);
  ASSERT_TRUE(d.has_aeth);
  EXPECT_EQ(d.aeth.syndrome, wire::aeth::nak_remote_access_error);
  EXPECT_EQ(d.aeth.msn, 0x102u);
}

TEST(Decode, SnapLengthInsideBthIsTruncatedAndInsideUdpIsNotRoce) {
  const auto frame = from_hex(testing::scapy_write_only);
  const std::size_t bth_start = 14 + 20 + 8;
  EXPECT_EQ(decode(frame, bth_start + 12).kind, FrameKind::roce);
  EXPECT_EQ(decode(frame, bth_start + 11).kind, FrameKind::roce_truncated);
  EXPECT_EQ(decode(frame, bth_start).kind, FrameKind::roce_truncated);
  // Cut inside the UDP header: the destination port was captured (bytes 2-3) but not the length.
  EXPECT_EQ(decode(frame, bth_start - 1).kind, FrameKind::other);
  EXPECT_EQ(decode(frame, 14 + 19).kind, FrameKind::other);
  EXPECT_EQ(decode(frame, 13).kind, FrameKind::other);
  EXPECT_EQ(decode(frame, 0).kind, FrameKind::other);
  // RETH cut: still a RoCE packet, but the RETH is not claimed.
  const DecodedFrame cut = decode(frame, bth_start + 12 + 15);
  EXPECT_EQ(cut.kind, FrameKind::roce);
  EXPECT_FALSE(cut.has_reth);
}

TEST(Decode, UdpLengthShorterThanBthIsMalformedEvenWhenBytesFollow) {
  auto frame = from_hex(testing::scapy_write_only);
  frame[14 + 20 + 4] = 0;
  frame[14 + 20 + 5] = 8 + 11;  // UDP length claims 11 bytes of payload
  EXPECT_EQ(decode(frame).kind, FrameKind::roce_malformed);
}

TEST(Decode, OtherUdpPortsTcpAndLaterFragmentsAreNotRoce) {
  auto frame = from_hex(testing::scapy_write_only);
  frame[14 + 20 + 3] = 0xb8;  // dst port 4792
  EXPECT_EQ(decode(frame).kind, FrameKind::other);
  frame = from_hex(testing::scapy_write_only);
  frame[14 + 9] = 6;  // TCP
  EXPECT_EQ(decode(frame).kind, FrameKind::other);
  frame = from_hex(testing::scapy_write_only);
  frame[14 + 6] = 0x20;
  frame[14 + 7] = 0x10;  // fragment offset 16: no UDP header here
  EXPECT_EQ(decode(frame).kind, FrameKind::other);
  EXPECT_EQ(decode(frame).ip_version, 4);
}

TEST(Decode, Ipv4OptionsAreSkipped) {
  RoceFrame f;
  auto frame = build(f);
  // Insert 8 bytes of options (two NOPs and padding) after the 20-byte IPv4 header.
  frame.insert(frame.begin() + 14 + 20, {1, 1, 1, 1, 1, 1, 1, 0});
  frame[14] = 0x47;
  const DecodedFrame d = decode(frame);
  ASSERT_EQ(d.kind, FrameKind::roce);
  EXPECT_EQ(d.bth.dest_qp, 0x101u);
}

TEST(Decode, Ipv6WithExtensionHeaders) {
  RoceFrame f;
  f.src = doc_v6(1);
  f.dst = doc_v6(2);
  f.ecn = wire::ecn_ce;
  f.dscp = 26;
  f.bth.dest_qp = 0x77;
  auto frame = build(f);
  DecodedFrame d = decode(frame);
  ASSERT_EQ(d.kind, FrameKind::roce);
  EXPECT_EQ(d.ip_version, 6);
  EXPECT_EQ(d.ecn, wire::ecn_ce);
  EXPECT_EQ(d.dscp, 26);
  EXPECT_EQ(d.src.to_string(), "2001:db8::1");
  EXPECT_EQ(d.bth.dest_qp, 0x77u);

  // A hop-by-hop options header (8 bytes) before UDP.
  auto ext = frame;
  ext[14 + 6] = wire::ip_proto::ipv6_hop_by_hop;
  ext.insert(ext.begin() + 14 + 40, {wire::ip_proto::udp, 0, 1, 4, 0, 0, 0, 0});
  d = decode(ext);
  ASSERT_EQ(d.kind, FrameKind::roce);
  EXPECT_EQ(d.bth.dest_qp, 0x77u);

  // A non-first fragment header: no UDP to see.
  auto frag = frame;
  frag[14 + 6] = wire::ip_proto::ipv6_fragment;
  frag.insert(frag.begin() + 14 + 40, {wire::ip_proto::udp, 0, 0x00, 0x08, 0, 0, 0, 1});
  EXPECT_EQ(decode(frag).kind, FrameKind::other);
}

TEST(Decode, CnpHasBecnAndTheThrottledQp) {
  const auto frame = build(cnp_frame(v4(198, 18, 0, 2), v4(198, 18, 0, 1), 0x1abcde));
  const DecodedFrame d = decode(frame);
  ASSERT_EQ(d.kind, FrameKind::roce);
  EXPECT_EQ(d.bth.opcode, wire::opcode::cnp);
  EXPECT_TRUE(d.bth.becn);
  EXPECT_EQ(d.bth.dest_qp, 0x1abcdeu);
  EXPECT_EQ(d.dscp, 48);
}

TEST(Decode, ImmediateAfterRethOnWriteOnlyWithImmediate) {
  RoceFrame f;
  f.bth.opcode = wire::opcode::rc_write_only_imm;
  f.reth.dma_length = 64;
  f.immdt = 0xdeadbeef;
  f.payload_size = 64;
  const DecodedFrame d = decode(build(f));
  ASSERT_TRUE(d.has_reth);
  EXPECT_EQ(d.reth.dma_length, 64u);
  ASSERT_TRUE(d.has_immdt);
  EXPECT_EQ(d.immdt, 0xdeadbeefu);
}

TEST(Decode, UdSendSkipsDeth) {
  RoceFrame f;
  f.bth.opcode = wire::opcode::ud_send_only_imm;
  f.immdt = 0x01020304;
  const DecodedFrame d = decode(build(f));
  ASSERT_TRUE(d.has_immdt);
  EXPECT_EQ(d.immdt, 0x01020304u);
}

TEST(Decode, PfcClassVectorAndQuanta) {
  const auto frame = build_pfc(0b1000'1001, {0xffff, 0, 0, 0x10, 0, 0, 0, 7});
  const DecodedFrame d = decode(frame);
  ASSERT_EQ(d.kind, FrameKind::pfc);
  EXPECT_EQ(d.pfc_class_enable, 0b1000'1001);
  EXPECT_EQ(d.pfc_quanta[0], 0xffff);
  EXPECT_EQ(d.pfc_quanta[3], 0x10);
  EXPECT_EQ(d.pfc_quanta[7], 7);
  EXPECT_EQ(decode(frame, 14 + 20).kind, FrameKind::pfc);
  EXPECT_EQ(decode(frame, 14 + 19).kind, FrameKind::mac_control_malformed);
  EXPECT_EQ(decode(frame, 15).kind, FrameKind::mac_control_malformed);
}

TEST(Decode, PauseIsNotPfc) {
  const auto frame = build_pause(0x1234);
  const DecodedFrame d = decode(frame);
  ASSERT_EQ(d.kind, FrameKind::pause);
  EXPECT_EQ(d.pause_quanta, 0x1234);
  EXPECT_EQ(decode(frame, 14 + 3).kind, FrameKind::mac_control_malformed);
}

TEST(Decode, TaggedPfcIsStillPfc) {
  auto frame = build_pfc(1, {5});
  frame.insert(frame.begin() + 12, {0x81, 0x00, 0x00, 0x05});
  EXPECT_EQ(decode(frame).kind, FrameKind::pfc);
  EXPECT_EQ(decode(frame).vlan_id, 5);
}

TEST(Decode, TagCutByTheSnapLength) {
  const auto frame = from_hex(testing::scapy_qinq_nak);
  EXPECT_EQ(decode(frame, 14 + 3).kind, FrameKind::other);
}

TEST(IpAddress, Formatting) {
  EXPECT_EQ(v4(198, 18, 255, 1).to_string(), "198.18.255.1");
  std::uint8_t a[16] = {};
  EXPECT_EQ(IpAddress::v6(a).to_string(), "::");
  a[15] = 1;
  EXPECT_EQ(IpAddress::v6(a).to_string(), "::1");
  const std::uint8_t b[16] = {0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 1, 0, 0, 0, 0, 0, 1, 0, 0};
  EXPECT_EQ(IpAddress::v6(b).to_string(), "2001:db8:0:1::1:0");
  const std::uint8_t c[16] = {0xfe, 0x80, 0,    0,    0,    0,    0,    0,
                              0x02, 0x11, 0x22, 0xff, 0xfe, 0x33, 0x44, 0x55};
  EXPECT_EQ(IpAddress::v6(c).to_string(), "fe80::211:22ff:fe33:4455");
  EXPECT_TRUE(v4(1, 2, 3, 4).is_v4());
  EXPECT_FALSE(IpAddress::v6(c).is_v4());
}

TEST(OpcodeName, KnownAndUnknown) {
  EXPECT_STREQ(opcode_name(0x0a), "RC_RDMA_WRITE_ONLY");
  EXPECT_STREQ(opcode_name(0x11), "RC_ACKNOWLEDGE");
  EXPECT_STREQ(opcode_name(0x81), "CNP");
  EXPECT_STREQ(opcode_name(0x64), "UD_SEND_ONLY");
  EXPECT_EQ(opcode_name(0x1f), nullptr);
  EXPECT_EQ(opcode_name(0xff), nullptr);
}

}  // namespace
}  // namespace rocehil::capture
