#include "verbs/gid.hpp"

#include <arpa/inet.h>
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstring>

#include "rocehil/common/error.hpp"
#include "rocehil/common/hex.hpp"

namespace rocehil::traffic::verbs {

namespace {

bool is_roce_v2(const GidEntry& entry) noexcept {
  return entry.type == IBV_GID_TYPE_ROCE_V2;
}

}  // namespace

std::string format_gid(const ibv_gid& gid) {
  static constexpr char digits[] = "0123456789abcdef";
  std::string text(32, '0');
  for (std::size_t i = 0; i < 16; ++i) {
    text[2 * i] = digits[gid.raw[i] >> 4];
    text[2 * i + 1] = digits[gid.raw[i] & 0xf];
  }
  return text;
}

std::optional<ibv_gid> parse_gid(std::string_view text) noexcept {
  if (text.size() != 32) return std::nullopt;
  ibv_gid gid{};
  for (std::size_t i = 0; i < 16; ++i) {
    const int high = hex_digit_value(text[2 * i]);
    const int low = hex_digit_value(text[2 * i + 1]);
    if (high < 0 || low < 0) return std::nullopt;
    gid.raw[i] = static_cast<std::uint8_t>(high << 4 | low);
  }
  return gid;
}

bool is_ipv4_mapped(const ibv_gid& gid) noexcept {
  static constexpr std::array<std::uint8_t, 12> prefix = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
  return std::equal(prefix.begin(), prefix.end(), gid.raw);
}

std::optional<ibv_gid> gid_from_address(std::string_view address) {
  const std::string text(address);  // inet_pton wants a terminated string
  ibv_gid gid{};
  in_addr v4{};
  if (inet_pton(AF_INET, text.c_str(), &v4) == 1) {
    gid.raw[10] = 0xff;
    gid.raw[11] = 0xff;
    std::memcpy(&gid.raw[12], &v4, 4);
    return gid;
  }
  if (inet_pton(AF_INET6, text.c_str(), gid.raw) == 1) return gid;
  return std::nullopt;
}

std::string gid_address_text(const ibv_gid& gid) {
  char text[INET6_ADDRSTRLEN] = {};
  if (is_ipv4_mapped(gid)) {
    inet_ntop(AF_INET, &gid.raw[12], text, sizeof text);
  } else {
    inet_ntop(AF_INET6, gid.raw, text, sizeof text);
  }
  return text;
}

std::string_view gid_type_name(std::uint32_t type) noexcept {
  switch (type) {
    case IBV_GID_TYPE_IB: return "IB";
    case IBV_GID_TYPE_ROCE_V1: return "RoCEv1";
    case IBV_GID_TYPE_ROCE_V2: return "RoCEv2";
    default: return "unknown";
  }
}

std::string describe_gids(std::span<const GidEntry> entries) {
  if (entries.empty()) return "none";
  std::string text;
  for (const GidEntry& entry : entries) {
    if (!text.empty()) text += ", ";
    text += fmt::format("{} {} {}", entry.index, gid_type_name(entry.type),
                        gid_address_text(entry.gid));
  }
  return text;
}

int select_gid_index(std::span<const GidEntry> entries, int requested, std::string_view address,
                     std::string_view device, std::uint8_t port) {
  const std::string where = fmt::format("{} port {}", device, port);
  const std::string table = fmt::format("its GIDs: {} (see 'show_gids' or 'ibv_devinfo -v -d {}')",
                                        describe_gids(entries), device);
  if (requested >= 0) {
    const auto it = std::find_if(entries.begin(), entries.end(),
                                 [&](const GidEntry& e) { return e.index == requested; });
    if (it == entries.end()) {
      throw input_error(fmt::format("{} has no GID at gid_index {}; {}", where, requested, table));
    }
    if (!is_roce_v2(*it)) {
      throw input_error(fmt::format("gid_index {} on {} is a {} GID but rocehil runs RoCEv2; {}",
                                    requested, where, gid_type_name(it->type), table));
    }
    if (!address.empty()) {
      const std::optional<ibv_gid> wanted = gid_from_address(address);
      if (!wanted || std::memcmp(it->gid.raw, wanted->raw, 16) != 0) {
        throw input_error(
            fmt::format("gid_index {} on {} carries {}, not the configured address "
                        "{} (drop one of the two); {}",
                        requested, where, gid_address_text(it->gid), address, table));
      }
    }
    return requested;
  }
  if (requested != -1) {
    throw input_error(
        fmt::format("gid_index {} for {} is neither an index nor -1 (pick the RoCEv2 "
                    "GID of the address)",
                    requested, where));
  }
  if (!address.empty()) {
    const std::optional<ibv_gid> wanted = gid_from_address(address);
    if (!wanted) {
      throw input_error(
          fmt::format("address '{}' for {} is not an IPv4 or IPv6 address", address, where));
    }
    for (const GidEntry& entry : entries) {
      if (is_roce_v2(entry) && std::memcmp(entry.gid.raw, wanted->raw, 16) == 0) {
        return entry.index;
      }
    }
    throw input_error(
        fmt::format("{} has no RoCEv2 GID for address {} (is the address on the "
                    "NIC's netdev?); {}",
                    where, address, table));
  }
  // Without an address: an IPv4 GID, else a routable IPv6 one, else link-local (fe80::/10), which
  // only reaches the same L2 segment.
  const auto rank = [](const ibv_gid& gid) {
    if (is_ipv4_mapped(gid)) return 3;
    const bool link_local = gid.raw[0] == 0xfe && (gid.raw[1] & 0xc0) == 0x80;
    return link_local ? 1 : 2;
  };
  const GidEntry* best = nullptr;
  for (const GidEntry& entry : entries) {
    if (is_roce_v2(entry) && (best == nullptr || rank(entry.gid) > rank(best->gid))) best = &entry;
  }
  if (best != nullptr) return best->index;
  throw input_error(
      fmt::format("{} has no RoCEv2 GID (give the port an IP address); {}", where, table));
}

}  // namespace rocehil::traffic::verbs
