#include "dataplane/packet.hpp"

#include <algorithm>

namespace rocehil::testbed::dataplane {

namespace {

std::uint16_t read16(const std::uint8_t* p) {
  return static_cast<std::uint16_t>(p[0] << 8 | p[1]);
}
std::uint32_t read32(const std::uint8_t* p) {
  return std::uint32_t{p[0]} << 24 | std::uint32_t{p[1]} << 16 | std::uint32_t{p[2]} << 8 | p[3];
}
void write16(std::uint8_t* p, std::uint16_t v) {
  p[0] = static_cast<std::uint8_t>(v >> 8);
  p[1] = static_cast<std::uint8_t>(v);
}
void write32(std::uint8_t* p, std::uint32_t v) {
  write16(p, static_cast<std::uint16_t>(v >> 16));
  write16(p + 2, static_cast<std::uint16_t>(v));
}

// RFC 1624 eqn. 3: HC' = ~(~HC + ~m + m'), for the 16-bit word at `word` changed from `old`.
void update_checksum(std::uint8_t* ip, std::uint16_t old_word, std::uint16_t new_word) {
  std::uint32_t sum = static_cast<std::uint16_t>(~read16(ip + 10));
  sum += static_cast<std::uint16_t>(~old_word);
  sum += new_word;
  while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
  write16(ip + 10, static_cast<std::uint16_t>(~sum));
}

constexpr Mac pfc_destination{0x01, 0x80, 0xc2, 0x00, 0x00, 0x01};

}  // namespace

std::uint16_t ethertype(std::span<const std::uint8_t> frame) {
  return frame.size() < ethernet_header ? 0 : read16(frame.data() + 12);
}

std::optional<Ipv4> parse_ipv4(std::span<const std::uint8_t> frame) {
  if (ethertype(frame) != ethertype_ipv4 || frame.size() < ethernet_header + 20) return {};
  const std::uint8_t* ip = frame.data() + ethernet_header;
  const std::size_t header = std::size_t{ip[0] & 0x0fu} * 4;
  const std::size_t total = read16(ip + 2);
  if (ip[0] >> 4 != 4 || header < 20 || total < header || ethernet_header + total > frame.size())
    return {};
  Ipv4 p;
  p.dscp = ip[1] >> 2;
  p.ecn = ip[1] & 3;
  p.ttl = ip[8];
  p.protocol = ip[9];
  p.source = read32(ip + 12);
  p.destination = read32(ip + 16);
  const bool first_fragment = (read16(ip + 6) & 0x1fff) == 0;
  if (first_fragment && (p.protocol == 17 || p.protocol == 6) && total >= header + 4) {
    p.source_port = read16(ip + header);
    p.destination_port = read16(ip + header + 2);
  }
  return p;
}

void decrement_ttl(std::span<std::uint8_t> frame) {
  std::uint8_t* ip = frame.data() + ethernet_header;
  const std::uint16_t old_word = read16(ip + 8);  // TTL and protocol
  --ip[8];
  update_checksum(ip, old_word, read16(ip + 8));
}

void mark_ce(std::span<std::uint8_t> frame) {
  std::uint8_t* ip = frame.data() + ethernet_header;
  const std::uint16_t old_word = read16(ip);  // version, IHL and TOS
  ip[1] |= 3;
  update_checksum(ip, old_word, read16(ip));
}

std::uint32_t flow_hash(const Ipv4& p, std::uint32_t seed) {
  // Murmur3's finaliser over each field: cheap, and every input bit reaches every output bit, so
  // the flows of consecutive UDP source ports spread over the spines.
  const auto mix = [](std::uint32_t h, std::uint32_t k) {
    k *= 0xcc9e2d51u;
    k = (k << 15) | (k >> 17);
    k *= 0x1b873593u;
    h ^= k;
    h = (h << 13) | (h >> 19);
    return h * 5 + 0xe6546b64u;
  };
  std::uint32_t h = seed;
  h = mix(h, p.source);
  h = mix(h, p.destination);
  h = mix(h, std::uint32_t{p.protocol});
  h = mix(h, std::uint32_t{p.source_port} << 16 | p.destination_port);
  h ^= h >> 16;
  h *= 0x85ebca6bu;
  h ^= h >> 13;
  h *= 0xc2b2ae35u;
  return h ^ (h >> 16);
}

void set_macs(std::span<std::uint8_t> frame, const Mac& destination, const Mac& source) {
  std::copy(destination.begin(), destination.end(), frame.data());
  std::copy(source.begin(), source.end(), frame.data() + 6);
}

Mac source_mac(std::span<const std::uint8_t> frame) {
  Mac mac{};
  std::copy_n(frame.data() + 6, 6, mac.begin());
  return mac;
}

std::optional<PauseFrame> parse_pause(std::span<const std::uint8_t> frame) {
  if (ethertype(frame) != ethertype_mac_control || frame.size() < ethernet_header + 4) return {};
  const std::uint8_t* body = frame.data() + ethernet_header;
  const std::uint16_t opcode = read16(body);
  PauseFrame pause;
  if (opcode == 0x0001) {
    pause.priority_flow_control = false;
    pause.enable = 0xff;
    pause.quanta.fill(read16(body + 2));
    return pause;
  }
  if (opcode != 0x0101 || frame.size() < ethernet_header + 4 + 16) return {};
  pause.enable = static_cast<std::uint8_t>(read16(body + 2));  // the high octet is reserved
  for (int p = 0; p < 8; ++p) pause.quanta[p] = read16(body + 4 + 2 * p);
  return pause;
}

std::size_t build_pfc(std::span<std::uint8_t, min_frame> out, const Mac& source,
                      std::uint8_t enable, const std::array<std::uint16_t, 8>& quanta) {
  std::fill(out.begin(), out.end(), 0);
  set_macs(out, pfc_destination, source);
  write16(out.data() + 12, ethertype_mac_control);
  write16(out.data() + 14, 0x0101);
  write16(out.data() + 16, enable);
  for (int p = 0; p < 8; ++p) write16(out.data() + 18 + 2 * p, quanta[p]);
  return min_frame;
}

std::optional<Arp> parse_arp(std::span<const std::uint8_t> frame) {
  if (ethertype(frame) != ethertype_arp || frame.size() < ethernet_header + 28) return {};
  const std::uint8_t* a = frame.data() + ethernet_header;
  // Ethernet and IPv4 only: hardware type 1, protocol 0x0800, lengths 6 and 4.
  if (read16(a) != 1 || read16(a + 2) != ethertype_ipv4 || a[4] != 6 || a[5] != 4) return {};
  Arp arp;
  arp.operation = read16(a + 6);
  std::copy_n(a + 8, 6, arp.sender_mac.begin());
  arp.sender_address = read32(a + 14);
  arp.target_address = read32(a + 24);
  return arp;
}

std::size_t build_arp_request(std::span<std::uint8_t, min_frame> out, const Mac& source_mac,
                              std::uint32_t source_address, std::uint32_t target) {
  std::fill(out.begin(), out.end(), 0);
  set_macs(out, Mac{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, source_mac);
  write16(out.data() + 12, ethertype_arp);
  std::uint8_t* a = out.data() + ethernet_header;
  write16(a, 1);
  write16(a + 2, ethertype_ipv4);
  a[4] = 6;
  a[5] = 4;
  write16(a + 6, 1);
  std::copy(source_mac.begin(), source_mac.end(), a + 8);
  write32(a + 14, source_address);
  write32(a + 24, target);  // target hardware address stays zero
  return min_frame;
}

}  // namespace rocehil::testbed::dataplane
