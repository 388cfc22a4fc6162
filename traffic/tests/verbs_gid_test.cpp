#include "verbs/gid.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "rocehil/common/error.hpp"

namespace rocehil::traffic::verbs {
namespace {

ibv_gid gid_from_hex(const char* hex) {
  const std::optional<ibv_gid> gid = parse_gid(hex);
  EXPECT_TRUE(gid.has_value()) << hex;
  return gid.value_or(ibv_gid{});
}

// What an mlx5 port with one IPv4 address shows: v1 and v2 entries for the link-local GID, then
// for the address.
std::vector<GidEntry> typical_table() {
  const ibv_gid link_local = gid_from_hex("fe800000000000000e42a1fffe0b0c0d");
  const ibv_gid v4 = gid_from_hex("00000000000000000000ffff0a000001");
  return {{0, link_local, IBV_GID_TYPE_ROCE_V1},
          {1, link_local, IBV_GID_TYPE_ROCE_V2},
          {2, v4, IBV_GID_TYPE_ROCE_V1},
          {3, v4, IBV_GID_TYPE_ROCE_V2}};
}

std::string message_of(const std::vector<GidEntry>& table, int requested, const char* address) {
  try {
    select_gid_index(table, requested, address, "mlx5_0", 1);
  } catch (const Error& error) {
    EXPECT_EQ(error.exit_code(), ExitCode::bad_input);
    return error.what();
  }
  ADD_FAILURE() << "no error for gid_index " << requested << " address '" << address << "'";
  return {};
}

TEST(VerbsGid, FormatsAndParses32HexDigits) {
  ibv_gid gid{};
  gid.raw[10] = 0xff;
  gid.raw[11] = 0xff;
  gid.raw[12] = 10;
  gid.raw[15] = 1;
  EXPECT_EQ(format_gid(gid), "00000000000000000000ffff0a000001");
  const std::optional<ibv_gid> back = parse_gid("00000000000000000000FFFF0A000001");
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(std::memcmp(back->raw, gid.raw, 16), 0);

  EXPECT_FALSE(parse_gid("").has_value());
  EXPECT_FALSE(parse_gid("00000000000000000000ffff0a00001").has_value());    // 31 digits
  EXPECT_FALSE(parse_gid("00000000000000000000ffff0a0000011").has_value());  // 33 digits
  EXPECT_FALSE(parse_gid("00000000000000000000ffff0a00000g").has_value());   // not hex
  EXPECT_FALSE(parse_gid("0000:0000:0000:0000:0000:ffff:0a00:0001").has_value());
}

TEST(VerbsGid, RecognisesIpv4MappedGids) {
  EXPECT_TRUE(is_ipv4_mapped(gid_from_hex("00000000000000000000ffffc6120001")));
  EXPECT_FALSE(is_ipv4_mapped(gid_from_hex("fe800000000000000e42a1fffe0b0c0d")));
  EXPECT_FALSE(is_ipv4_mapped(gid_from_hex("00000000000000000000fffec6120001")));
  EXPECT_EQ(gid_address_text(gid_from_hex("00000000000000000000ffffc6120001")), "198.18.0.1");
  EXPECT_EQ(gid_address_text(gid_from_hex("fe800000000000000e42a1fffe0b0c0d")),
            "fe80::e42:a1ff:fe0b:c0d");
}

TEST(VerbsGid, AddressesBecomeGids) {
  EXPECT_EQ(format_gid(gid_from_address("198.18.0.1").value()), "00000000000000000000ffffc6120001");
  EXPECT_EQ(format_gid(gid_from_address("2001:db8::7").value()),
            "20010db8000000000000000000000007");
  EXPECT_FALSE(gid_from_address("mlx5_0").has_value());
  EXPECT_FALSE(gid_from_address("").has_value());
}

TEST(VerbsGid, ExplicitIndexMustBeARoceV2Entry) {
  EXPECT_EQ(select_gid_index(typical_table(), 3, "", "mlx5_0", 1), 3);
  EXPECT_EQ(select_gid_index(typical_table(), 3, "10.0.0.1", "mlx5_0", 1), 3);
  const std::string conflict = message_of(typical_table(), 1, "10.0.0.1");
  EXPECT_NE(conflict.find("carries fe80::e42:a1ff:fe0b:c0d, not the configured address 10.0.0.1"),
            std::string::npos)
      << conflict;

  const std::string v1 = message_of(typical_table(), 2, "");
  EXPECT_NE(v1.find("RoCEv1"), std::string::npos) << v1;
  const std::string missing = message_of(typical_table(), 7, "");
  EXPECT_NE(missing.find("mlx5_0 port 1 has no GID at gid_index 7"), std::string::npos) << missing;
  EXPECT_NE(missing.find("3 RoCEv2 10.0.0.1"), std::string::npos) << missing;
  message_of(typical_table(), -2, "");
}

TEST(VerbsGid, MinusOnePicksTheRoceV2GidOfTheAddress) {
  EXPECT_EQ(select_gid_index(typical_table(), -1, "10.0.0.1", "mlx5_0", 1), 3);
  const std::string other = message_of(typical_table(), -1, "10.0.0.9");
  EXPECT_NE(other.find("no RoCEv2 GID for address 10.0.0.9"), std::string::npos) << other;
  EXPECT_NE(other.find("0 RoCEv1 fe80::e42:a1ff:fe0b:c0d, 1 RoCEv2"), std::string::npos) << other;
  const std::string bad = message_of(typical_table(), -1, "not-an-ip");
  EXPECT_NE(bad.find("not an IPv4 or IPv6 address"), std::string::npos) << bad;
}

TEST(VerbsGid, WithoutAnAddressPrefersIpv4ThenRoutableIpv6) {
  EXPECT_EQ(select_gid_index(typical_table(), -1, "", "mlx5_0", 1), 3);

  const std::vector<GidEntry> ipv6_only = {
      {0, gid_from_hex("fe800000000000000e42a1fffe0b0c0d"), IBV_GID_TYPE_ROCE_V2},
      {1, gid_from_hex("20010db8000000000000000000000007"), IBV_GID_TYPE_ROCE_V2},
  };
  EXPECT_EQ(select_gid_index(ipv6_only, -1, "", "mlx5_0", 1), 1);

  const std::vector<GidEntry> v1_only = {
      {0, gid_from_hex("fe800000000000000e42a1fffe0b0c0d"), IBV_GID_TYPE_ROCE_V1}};
  const std::string none = message_of(v1_only, -1, "");
  EXPECT_NE(none.find("has no RoCEv2 GID"), std::string::npos) << none;
  EXPECT_NE(message_of({}, -1, "").find("its GIDs: none"), std::string::npos);
}

}  // namespace
}  // namespace rocehil::traffic::verbs
