#pragma once

// Test helper: addresses from the ranges tests use (198.18.0.0/15 and the 2001:db8::/32
// documentation prefix).

#include <cstdint>

#include "rocehil/capture/decode.hpp"

namespace rocehil::capture::testing {

inline IpAddress v4(std::uint8_t a, std::uint8_t b, std::uint8_t c, std::uint8_t d) {
  const std::uint8_t x[4] = {a, b, c, d};
  return IpAddress::v4(x);
}

// 2001:db8::<last>
inline IpAddress doc_v6(std::uint8_t last) {
  std::uint8_t x[16] = {0x20, 0x01, 0x0d, 0xb8};
  x[15] = last;
  return IpAddress::v6(x);
}

}  // namespace rocehil::capture::testing
