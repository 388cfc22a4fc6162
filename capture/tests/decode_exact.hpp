#pragma once

// Test helper: decode_ethernet on the first `caplen` bytes of a frame, from a copy of exactly
// that many bytes, so that under AddressSanitizer a read past the captured bytes fails the test.

#include <algorithm>
#include <cstdint>
#include <vector>

#include "rocehil/capture/decode.hpp"

namespace rocehil::capture::testing {

inline DecodedFrame decode(const std::vector<std::uint8_t>& bytes, std::size_t caplen = SIZE_MAX) {
  const std::vector<std::uint8_t> exact(
      bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(std::min(caplen, bytes.size())));
  DecodedFrame d;
  decode_ethernet(exact.data(), static_cast<std::uint32_t>(exact.size()), d);
  return d;
}

}  // namespace rocehil::capture::testing
