#pragma once

#include <cstdint>
#include <optional>
#include <span>

namespace rocehil::wire {

// The RoCEv2 invariant CRC (IBTA Annex A17): CRC-32 over 8 bytes of ones, then the IP header
// with its variant fields (IPv4 TOS, TTL, header checksum; IPv6 traffic class, flow label, hop
// limit) set to ones, the UDP header with its checksum set to ones, the BTH with its FECN/BECN
// byte set to ones, and everything up to (not including) the ICRC itself.
//
// `ip_packet` starts at the IP header and ends just before the 4 ICRC bytes. Returns nothing when
// the bytes are not an IPv4/IPv6 + UDP + BTH packet. Allocation-free.
std::optional<std::uint32_t> icrc(std::span<const std::uint8_t> ip_packet) noexcept;

// The ICRC goes on the wire least significant byte first, as the Ethernet FCS does.
inline void store_icrc(std::uint8_t* dst, std::uint32_t value) noexcept {
  for (int i = 0; i < 4; ++i) dst[i] = static_cast<std::uint8_t>(value >> (8 * i));
}
inline std::uint32_t load_icrc(const std::uint8_t* src) noexcept {
  return static_cast<std::uint32_t>(src[0]) | static_cast<std::uint32_t>(src[1]) << 8 |
         static_cast<std::uint32_t>(src[2]) << 16 | static_cast<std::uint32_t>(src[3]) << 24;
}

}  // namespace rocehil::wire
