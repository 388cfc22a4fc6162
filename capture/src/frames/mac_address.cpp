#include "rocehil/capture/mac_address.hpp"

#include <cstddef>
#include <cstdint>

#include "rocehil/common/hex.hpp"

namespace rocehil::capture {

std::optional<MacAddress> parse_mac_address(std::string_view text) {
  // Six pairs of hex digits with one separator, the same throughout: 17 characters.
  if (text.size() != 17 || (text[2] != ':' && text[2] != '-')) return std::nullopt;
  MacAddress mac{};
  for (std::size_t i = 0; i < 6; ++i) {
    const int hi = hex_digit_value(text[3 * i]), lo = hex_digit_value(text[3 * i + 1]);
    if (hi < 0 || lo < 0 || (i < 5 && text[3 * i + 2] != text[2])) return std::nullopt;
    mac[i] = static_cast<std::uint8_t>(hi << 4 | lo);
  }
  return mac;
}

}  // namespace rocehil::capture
