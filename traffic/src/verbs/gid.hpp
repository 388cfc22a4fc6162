#pragma once

#include <infiniband/verbs.h>

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

// GIDs as text and as table entries, and the choice of the source GID. Pure functions, so the
// selection rules are tested without a device.
namespace rocehil::traffic::verbs {

// One valid entry of a port's GID table (ibv_query_gid_ex).
struct GidEntry {
  int index = 0;
  ibv_gid gid{};
  std::uint32_t type = IBV_GID_TYPE_ROCE_V2;  // enum ibv_gid_type
};

// The Endpoint form: 32 lowercase hex digits, no separators.
std::string format_gid(const ibv_gid& gid);
// Accepts exactly 32 hex digits (either case); nullopt otherwise.
std::optional<ibv_gid> parse_gid(std::string_view text) noexcept;

// RoCEv2 GIDs of IPv4 interfaces are IPv4-mapped IPv6 addresses, ::ffff:a.b.c.d.
bool is_ipv4_mapped(const ibv_gid& gid) noexcept;
// The GID an interface address has: IPv4 text -> ::ffff:a.b.c.d, IPv6 text -> itself.
std::optional<ibv_gid> gid_from_address(std::string_view address);
// The interface address a GID carries: "10.0.0.1" when IPv4-mapped, IPv6 text otherwise.
std::string gid_address_text(const ibv_gid& gid);

std::string_view gid_type_name(std::uint32_t type) noexcept;  // IB, RoCEv1, RoCEv2
// "3 RoCEv2 ::ffff:10.0.0.1, ..." for messages and device listings.
std::string describe_gids(std::span<const GidEntry> entries);

// The source GID index for traffic (ProviderOptions::gid_index and ::address):
// - `requested >= 0`: that entry, which must exist, be RoCEv2, and carry the address if one is
//   given;
// - `requested == -1` with an address: the RoCEv2 entry whose GID carries that address;
// - `requested == -1` without one: the first RoCEv2 entry, preferring IPv4-mapped ones.
// Throws rocehil::Error (bad input) naming the device and port and listing the table.
int select_gid_index(std::span<const GidEntry> entries, int requested, std::string_view address,
                     std::string_view device, std::uint8_t port);

}  // namespace rocehil::traffic::verbs
