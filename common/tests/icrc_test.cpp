#include "rocehil/common/icrc.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace rocehil::wire {
namespace {

std::vector<std::uint8_t> from_hex(const std::string& hex) {
  std::vector<std::uint8_t> out;
  for (std::size_t i = 0; i + 1 < hex.size(); i += 2)
    out.push_back(static_cast<std::uint8_t>(std::stoul(hex.substr(i, 2), nullptr, 16)));
  return out;
}

// Packets built and ICRC'd by an independent implementation: scapy 2.5's BTH.compute_icrc for
// IPv4 (scapy.contrib.roce), and Python's zlib.crc32 over a hand-masked copy for IPv6 (scapy
// does not do IPv6 ICRC). Each hex string is the IP packet with its trailing 4 ICRC bytes.
struct Vector {
  const char* name;
  const char* hex;
  std::uint32_t expected;
};

const Vector vectors[] = {
    {"ipv4 write-only with RETH, DSCP 26 ECT(0)",
     "456a004c000040004011ae0fc6120001c6120002c00012b7003800000a00ffff0000010100000005000000000001"
     "00000000123400000010000102030405060708090a0b0c0d0e0f8342a1c5",
     0xc5a14283},
    {"ipv4 CNP, DSCP 48",
     "45c1003c000140004011adc7c6120002c6120001c00112b7002800008100ffff40000101000000000000000000"
     "00000000000000000000008c7c682f",
     0x2f687c8c},
    {"ipv6 send-only with CE, flow label 0x12345",
     "66b123450024114020010db800000000000000000000000120010db8000000000000000000000002c00012b70024"
     "00000400ffff000001018000000768656c6c6f20776f726c642100000000",
     0x86346f4e},
};

TEST(Icrc, MatchesIndependentImplementations) {
  for (const Vector& v : vectors) {
    const auto packet = from_hex(v.hex);
    const auto without_icrc = std::span<const std::uint8_t>(packet).first(packet.size() - 4);
    const auto got = icrc(without_icrc);
    ASSERT_TRUE(got.has_value()) << v.name;
    EXPECT_EQ(*got, v.expected) << v.name;
    if (std::string(v.name).rfind("ipv4", 0) == 0) {
      // scapy wrote the ICRC into the packet: least significant byte first.
      EXPECT_EQ(load_icrc(packet.data() + packet.size() - 4), v.expected) << v.name;
    }
  }
}

TEST(Icrc, VariantFieldsDoNotChangeIt) {
  auto packet = from_hex(vectors[0].hex);
  packet.resize(packet.size() - 4);
  const auto base = icrc(packet);
  packet[1] ^= 0x03;          // ECN set to CE on the way, as a switch does
  packet[8] -= 3;             // TTL decremented by three routers
  packet[10] ^= 0x5a;         // checksum rewritten
  packet[20 + 6] = 0x12;      // a UDP checksum filled in
  packet[20 + 8 + 4] = 0x80;  // FECN set
  EXPECT_EQ(icrc(packet), base);
}

TEST(Icrc, InvariantFieldsChangeIt) {
  auto packet = from_hex(vectors[0].hex);
  packet.resize(packet.size() - 4);
  const auto base = icrc(packet);
  auto flipped = packet;
  flipped[20 + 8 + 7] ^= 1;  // destination QP
  EXPECT_NE(icrc(flipped), base);
  flipped = packet;
  flipped.back() ^= 0x80;  // payload
  EXPECT_NE(icrc(flipped), base);
}

TEST(Icrc, RejectsWhatIsNotIpUdpBth) {
  EXPECT_FALSE(icrc({}).has_value());
  auto packet = from_hex(vectors[0].hex);
  EXPECT_FALSE(icrc(std::span<const std::uint8_t>(packet).first(20 + 8 + 11)).has_value());
  packet[9] = 6;  // TCP
  EXPECT_FALSE(icrc(packet).has_value());
  packet[0] = 0x55;  // IP version 5
  EXPECT_FALSE(icrc(packet).has_value());
}

}  // namespace
}  // namespace rocehil::wire
