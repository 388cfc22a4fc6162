#include "rocehil/common/icrc.hpp"

#include <array>
#include <cstring>

#include "rocehil/common/crc32.hpp"
#include "rocehil/common/roce_wire.hpp"

namespace rocehil::wire {

std::optional<std::uint32_t> icrc(std::span<const std::uint8_t> ip_packet) noexcept {
  if (ip_packet.empty()) return std::nullopt;
  const std::uint8_t version = ip_packet[0] >> 4;
  std::size_t ip_len = 0;
  if (version == 4) {
    ip_len = static_cast<std::size_t>(ip_packet[0] & 0x0f) * 4;
    if (ip_len < 20 || ip_packet.size() < ip_len || ip_packet[9] != ip_proto::udp)
      return std::nullopt;
  } else if (version == 6) {
    // Extension headers between IPv6 and UDP are not allowed on RoCEv2 packets.
    ip_len = 40;
    if (ip_packet.size() < ip_len || ip_packet[6] != ip_proto::udp) return std::nullopt;
  } else {
    return std::nullopt;
  }
  const std::size_t masked_len = ip_len + udp_header_size + bth_size;
  if (ip_packet.size() < masked_len) return std::nullopt;

  // The headers are at most 60 + 8 + 12 bytes: mask a copy on the stack.
  std::array<std::uint8_t, 60 + udp_header_size + bth_size> h;
  std::memcpy(h.data(), ip_packet.data(), masked_len);
  if (version == 4) {
    h[1] = 0xff;           // TOS (DSCP and ECN)
    h[8] = 0xff;           // TTL
    h[10] = h[11] = 0xff;  // header checksum
  } else {
    h[0] |= 0x0f;               // traffic class, high nibble
    h[1] = h[2] = h[3] = 0xff;  // traffic class low nibble and flow label
    h[7] = 0xff;                // hop limit
  }
  h[ip_len + 6] = h[ip_len + 7] = 0xff;    // UDP checksum
  h[ip_len + udp_header_size + 4] = 0xff;  // BTH FECN, BECN, reserved

  static constexpr std::array<std::uint8_t, 8> ones{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
  std::uint32_t state = crc32_update(crc32_init, ones);
  state = crc32_update(state, std::span(h.data(), masked_len));
  state = crc32_update(state, ip_packet.subspan(masked_len));
  return crc32_final(state);
}

}  // namespace rocehil::wire
