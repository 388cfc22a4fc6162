#pragma once

#include <cstdint>
#include <span>

namespace rocehil {

// CRC-32 as Ethernet computes it (reflected polynomial 0xEDB88320, initial value and final XOR
// 0xFFFFFFFF). Streaming: start from crc32_init, feed bytes with crc32_update, finish with
// crc32_final. Slice-by-8 tables, no allocation: the ICRC of every soft-provider packet uses it.
inline constexpr std::uint32_t crc32_init = 0xffffffffu;
std::uint32_t crc32_update(std::uint32_t state, std::span<const std::uint8_t> bytes) noexcept;
constexpr std::uint32_t crc32_final(std::uint32_t state) noexcept {
  return state ^ 0xffffffffu;
}

inline std::uint32_t crc32(std::span<const std::uint8_t> bytes) noexcept {
  return crc32_final(crc32_update(crc32_init, bytes));
}

}  // namespace rocehil
