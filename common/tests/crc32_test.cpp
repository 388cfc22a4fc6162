#include "rocehil/common/crc32.hpp"

#include <gtest/gtest.h>

#include <string_view>
#include <vector>

namespace rocehil {
namespace {

std::span<const std::uint8_t> bytes(std::string_view s) {
  return {reinterpret_cast<const std::uint8_t*>(s.data()), s.size()};
}

// Bit-at-a-time reference, straight from the polynomial: the table-driven code must agree.
std::uint32_t reference_crc32(std::span<const std::uint8_t> data) {
  std::uint32_t c = 0xffffffffu;
  for (std::uint8_t b : data) {
    c ^= b;
    for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ 0xedb88320u : c >> 1;
  }
  return ~c;
}

TEST(Crc32, CheckValueOfTheStandard) {
  // The catalogue check value of CRC-32/ISO-HDLC (Ethernet): CRC of "123456789".
  EXPECT_EQ(crc32(bytes("123456789")), 0xcbf43926u);
  EXPECT_EQ(crc32(bytes("")), 0x00000000u);
}

TEST(Crc32, MatchesBitwiseReferenceAtEveryLengthAndAlignment) {
  std::vector<std::uint8_t> data(300);
  for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<std::uint8_t>(i * 131 + 7);
  for (std::size_t start = 0; start < 8; ++start) {
    for (std::size_t len = 0; start + len <= data.size(); len += 13) {
      const auto s = std::span<const std::uint8_t>(data).subspan(start, len);
      ASSERT_EQ(crc32(s), reference_crc32(s)) << "start " << start << " len " << len;
    }
  }
}

TEST(Crc32, StreamingEqualsOneShot) {
  const auto all = bytes("The quick brown fox jumps over the lazy dog");
  std::uint32_t state = crc32_init;
  state = crc32_update(state, all.subspan(0, 5));
  state = crc32_update(state, all.subspan(5, 17));
  state = crc32_update(state, all.subspan(22));
  EXPECT_EQ(crc32_final(state), crc32(all));
  EXPECT_EQ(crc32(all), 0x414fa339u);
}

}  // namespace
}  // namespace rocehil
