#pragma once

namespace rocehil {

// The value of one hex digit, either case; -1 for any other character. For the parsers of
// addresses, GIDs and secrets, which each say themselves what a malformed text is.
constexpr int hex_digit_value(char c) noexcept {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace rocehil
