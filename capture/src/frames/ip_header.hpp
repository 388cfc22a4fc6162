#pragma once

#include <cstddef>
#include <cstdint>

#include <cstring>

#include "rocehil/capture/decode.hpp"
#include "rocehil/common/byte_order.hpp"

namespace rocehil::capture {

// The IPv4 header checksum (RFC 791: one's complement of the one's complement sum of the
// header's 16-bit words), over a header whose checksum field is zero.
inline std::uint16_t ipv4_header_checksum(const std::uint8_t* header, std::size_t len) noexcept {
  std::uint32_t sum = 0;
  for (std::size_t i = 0; i + 1 < len; i += 2) sum += load_be16(header + i);
  while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
  return static_cast<std::uint16_t>(~sum);
}

// Writes the IP header of a packet carrying `payload_size` bytes of `protocol` from `src` to
// `dst` (IPv4 when `src` is, else IPv6) and returns its size. IPv4 goes with identification 0 and
// don't-fragment set, as RoCE NICs and switches' mirror sessions send it.
inline std::size_t write_ip_header(std::uint8_t* ip, const IpAddress& src, const IpAddress& dst,
                                   std::uint8_t protocol, std::uint8_t traffic_class,
                                   std::uint8_t ttl, std::size_t payload_size) noexcept {
  if (src.is_v4()) {
    std::memset(ip, 0, 20);
    ip[0] = 0x45;
    ip[1] = traffic_class;
    store_be16(ip + 2, static_cast<std::uint16_t>(20 + payload_size));
    store_be16(ip + 6, 0x4000);
    ip[8] = ttl;
    ip[9] = protocol;
    std::memcpy(ip + 12, src.bytes.data() + 12, 4);
    std::memcpy(ip + 16, dst.bytes.data() + 12, 4);
    store_be16(ip + 10, ipv4_header_checksum(ip, 20));
    return 20;
  }
  store_be32(ip, 0x60000000u | static_cast<std::uint32_t>(traffic_class) << 20);
  store_be16(ip + 4, static_cast<std::uint16_t>(payload_size));
  ip[6] = protocol;
  ip[7] = ttl;
  std::memcpy(ip + 8, src.bytes.data(), 16);
  std::memcpy(ip + 24, dst.bytes.data(), 16);
  return 40;
}

}  // namespace rocehil::capture
