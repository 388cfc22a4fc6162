#include "soft/packet.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cstring>

#include "rocehil/common/byte_order.hpp"
#include "rocehil/common/crc32.hpp"
#include "rocehil/common/icrc.hpp"

namespace rocehil::traffic::soft {

namespace {

namespace op = wire::opcode;

inline constexpr std::size_t ipv4_header_size = 20;
inline constexpr std::size_t ipv6_header_size = 40;
// The BTH byte holding FECN, BECN and six reserved bits: switches may set FECN/BECN on the way,
// so the ICRC counts it as all ones.
inline constexpr std::size_t bth_variant_byte = 4;

// One parsed endpoint address, before the two ends of a flow are checked to agree.
struct IpEndpoint {
  bool ipv6 = false;
  std::array<std::uint8_t, 16> address{};
};

// Linux sends to and from ::ffff:a.b.c.d as plain IPv4, so the ICRC needs the IPv4 form.
IpEndpoint from_ipv6_bytes(const std::uint8_t* bytes) noexcept {
  static constexpr std::uint8_t mapped_prefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
  IpEndpoint e;
  if (std::memcmp(bytes, mapped_prefix, sizeof mapped_prefix) == 0) {
    std::memcpy(e.address.data(), bytes + 12, 4);
  } else {
    e.ipv6 = true;
    std::memcpy(e.address.data(), bytes, 16);
  }
  return e;
}

IpEndpoint from_ipv4_bytes(const std::uint8_t* bytes) noexcept {
  IpEndpoint e;
  std::memcpy(e.address.data(), bytes, 4);
  return e;
}

std::optional<IpEndpoint> parse_ip(std::string_view text) noexcept {
  // inet_pton wants a NUL-terminated string; the longest IPv6 text fits INET6_ADDRSTRLEN.
  char terminated[INET6_ADDRSTRLEN + 1];
  if (text.empty() || text.size() >= sizeof terminated) return std::nullopt;
  std::memcpy(terminated, text.data(), text.size());
  terminated[text.size()] = '\0';
  std::uint8_t bytes[16];
  if (inet_pton(AF_INET, terminated, bytes) == 1) return from_ipv4_bytes(bytes);
  if (inet_pton(AF_INET6, terminated, bytes) == 1) return from_ipv6_bytes(bytes);
  return std::nullopt;
}

std::optional<IpEndpoint> endpoint_of(const sockaddr* address, std::uint16_t& port) noexcept {
  if (address == nullptr) return std::nullopt;
  // Copied out rather than cast, so that a sockaddr stored in any buffer is read safely.
  if (address->sa_family == AF_INET) {
    sockaddr_in in;
    std::memcpy(&in, address, sizeof in);
    port = ntohs(in.sin_port);
    return from_ipv4_bytes(reinterpret_cast<const std::uint8_t*>(&in.sin_addr));
  }
  if (address->sa_family == AF_INET6) {
    sockaddr_in6 in6;
    std::memcpy(&in6, address, sizeof in6);
    port = ntohs(in6.sin6_port);
    return from_ipv6_bytes(in6.sin6_addr.s6_addr);
  }
  return std::nullopt;
}

bool is_unspecified(const IpEndpoint& e) noexcept {
  for (const std::uint8_t b : e.address)
    if (b != 0) return false;
  return true;
}

std::optional<FlowAddress> flow_of(const std::optional<IpEndpoint>& src, std::uint16_t src_port,
                                   const std::optional<IpEndpoint>& dst,
                                   std::uint16_t dst_port) noexcept {
  if (!src || !dst || src->ipv6 != dst->ipv6) return std::nullopt;
  if (is_unspecified(*src) || is_unspecified(*dst)) return std::nullopt;
  return FlowAddress{src->ipv6, src->address, dst->address, src_port, dst_port};
}

// Bytes after the BTH: the extended headers, or the CNP's reserved bytes.
std::size_t extension_size(std::uint8_t opcode) noexcept {
  if (opcode == op::cnp) return wire::cnp_reserved_size;
  std::size_t n = op::transport(opcode) == op::transport_ud ? deth_size : 0;
  if (op::has_reth(opcode)) n += wire::reth_size;
  if (op::has_aeth(opcode)) n += wire::aeth_size;
  if (op::has_immdt(opcode)) n += wire::immdt_size;
  return n;
}

std::uint8_t pad_count_of(std::span<const std::uint8_t> bth) noexcept {
  return (bth[1] >> 4) & 0x3;
}

// The ICRC over the pseudo header (ones, masked IP and UDP headers, masked BTH), the rest of the
// headers, the payload and `zero_pad` zero bytes. Only the pseudo header is built; the rest is
// read where it lies.
std::uint32_t icrc_over(const FlowAddress& flow, std::span<const std::uint8_t> headers,
                        std::span<const std::uint8_t> payload, std::size_t zero_pad) noexcept {
  const std::size_t udp_payload_length =
      headers.size() + payload.size() + zero_pad + wire::icrc_size;
  const auto udp_length = static_cast<std::uint16_t>(wire::udp_header_size + udp_payload_length);

  std::array<std::uint8_t, 8 + ipv6_header_size + wire::udp_header_size + wire::bth_size> pseudo;
  std::uint8_t* p = pseudo.data();
  std::memset(p, 0xff, 8);  // stands in for the InfiniBand LRH
  p += 8;
  if (!flow.ipv6) {
    p[0] = 0x45;  // version 4, no options: the kernel adds none to these sockets
    p[1] = 0xff;  // TOS
    store_be16(p + 2, static_cast<std::uint16_t>(ipv4_header_size + udp_length));
    store_be16(p + 4, 0);       // identification: Linux writes 0 on DF datagram sockets
    store_be16(p + 6, 0x4000);  // DF, fragment offset 0
    p[8] = 0xff;                // TTL
    p[9] = wire::ip_proto::udp;
    p[10] = p[11] = 0xff;  // header checksum
    std::memcpy(p + 12, flow.src.data(), 4);
    std::memcpy(p + 16, flow.dst.data(), 4);
    p += ipv4_header_size;
  } else {
    p[0] = 0x6f;                // version 6, traffic class high nibble
    p[1] = p[2] = p[3] = 0xff;  // traffic class low nibble, flow label
    store_be16(p + 4, udp_length);
    p[6] = wire::ip_proto::udp;
    p[7] = 0xff;  // hop limit
    std::memcpy(p + 8, flow.src.data(), 16);
    std::memcpy(p + 24, flow.dst.data(), 16);
    p += ipv6_header_size;
  }
  store_be16(p, flow.src_port);
  store_be16(p + 2, flow.dst_port);
  store_be16(p + 4, udp_length);
  p[6] = p[7] = 0xff;  // UDP checksum
  p += wire::udp_header_size;
  std::memcpy(p, headers.data(), wire::bth_size);
  p[bth_variant_byte] = 0xff;
  p += wire::bth_size;

  static constexpr std::array<std::uint8_t, 3> zeros{};
  std::uint32_t state = crc32_update(crc32_init, std::span(pseudo.data(), p));
  state = crc32_update(state, headers.subspan(wire::bth_size));
  state = crc32_update(state, payload);
  state = crc32_update(state, std::span(zeros.data(), zero_pad));
  return crc32_final(state);
}

}  // namespace

std::optional<FlowAddress> make_flow(std::string_view src_ip, std::uint16_t src_port,
                                     std::string_view dst_ip, std::uint16_t dst_port) noexcept {
  return flow_of(parse_ip(src_ip), src_port, parse_ip(dst_ip), dst_port);
}

std::optional<FlowAddress> make_flow(const sockaddr* src, const sockaddr* dst) noexcept {
  std::uint16_t src_port = 0;
  std::uint16_t dst_port = 0;
  const auto src_endpoint = endpoint_of(src, src_port);
  const auto dst_endpoint = endpoint_of(dst, dst_port);
  return flow_of(src_endpoint, src_port, dst_endpoint, dst_port);
}

bool is_supported_opcode(std::uint8_t opcode) noexcept {
  return opcode <= op::rc_acknowledge || opcode == op::ud_send_only ||
         opcode == op::ud_send_only_imm || opcode == op::cnp;
}

std::size_t headers_size(std::uint8_t opcode) noexcept {
  return is_supported_opcode(opcode) ? wire::bth_size + extension_size(opcode) : 0;
}

std::size_t encode_headers(const PacketHeaders& headers, std::span<std::uint8_t> out) noexcept {
  const Bth& bth = headers.bth;
  const std::size_t size = headers_size(bth.opcode);
  if (size == 0 || out.size() < size) return 0;

  std::uint8_t* p = out.data();
  p[0] = bth.opcode;
  // TVer (low nibble) stays 0.
  p[1] = static_cast<std::uint8_t>((bth.solicited ? 0x80 : 0) | (bth.migreq ? 0x40 : 0) |
                                   (bth.pad_count & 0x3) << 4);
  store_be16(p + 2, bth.pkey);
  p[4] = static_cast<std::uint8_t>((bth.fecn ? 0x80 : 0) | (bth.becn ? 0x40 : 0));
  store_be24(p + 5, bth.dest_qp);
  p[8] = bth.ack_request ? 0x80 : 0;
  store_be24(p + 9, bth.psn);
  p += wire::bth_size;

  if (bth.opcode == op::cnp) {
    std::memset(p, 0, wire::cnp_reserved_size);
    return size;
  }
  if (op::transport(bth.opcode) == op::transport_ud) {
    store_be32(p, headers.deth.qkey);
    p[4] = 0;  // reserved
    store_be24(p + 5, headers.deth.src_qp);
    p += deth_size;
  }
  if (op::has_reth(bth.opcode)) {
    store_be64(p, headers.reth.va);
    store_be32(p + 8, headers.reth.rkey);
    store_be32(p + 12, headers.reth.length);
    p += wire::reth_size;
  }
  if (op::has_aeth(bth.opcode)) {
    p[0] = headers.aeth.syndrome;
    store_be24(p + 1, headers.aeth.msn);
    p += wire::aeth_size;
  }
  if (op::has_immdt(bth.opcode)) store_be32(p, headers.immdt);
  return size;
}

std::uint32_t compute_icrc(const FlowAddress& flow, std::span<const std::uint8_t> headers,
                           std::span<const std::uint8_t> payload) noexcept {
  if (headers.size() < wire::bth_size) return 0;
  return icrc_over(flow, headers, payload, 0);
}

std::size_t encode_trailer(const FlowAddress& flow, std::span<const std::uint8_t> headers,
                           std::span<const std::uint8_t> payload,
                           std::span<std::uint8_t> out) noexcept {
  if (headers.size() < wire::bth_size) return 0;
  const std::uint8_t pad = pad_for(payload.size());
  // A PadCnt that disagrees with the payload would make the receiver cut real bytes or keep
  // pad bytes; refuse rather than send such a packet.
  if (pad_count_of(headers) != pad) return 0;
  const std::size_t trailer = pad + wire::icrc_size;
  if (out.size() < trailer) return 0;
  if (headers.size() + payload.size() + trailer > max_udp_payload_size(flow.ipv6)) return 0;

  std::memset(out.data(), 0, pad);
  wire::store_icrc(out.data() + pad, icrc_over(flow, headers, payload, pad));
  return trailer;
}

std::size_t finish_packet(const FlowAddress& flow, std::span<std::uint8_t> packet,
                          std::size_t headers_length, std::size_t payload_length) noexcept {
  if (headers_length > packet.size() || payload_length > packet.size() - headers_length) return 0;
  const std::span<const std::uint8_t> headers = packet.first(headers_length);
  const std::span<const std::uint8_t> payload = packet.subspan(headers_length, payload_length);
  const std::size_t trailer =
      encode_trailer(flow, headers, payload, packet.subspan(headers_length + payload_length));
  return trailer == 0 ? 0 : headers_length + payload_length + trailer;
}

std::string_view decode_error_name(DecodeError error) noexcept {
  switch (error) {
    case DecodeError::none: return "none";
    case DecodeError::too_short: return "too_short";
    case DecodeError::bad_transport_version: return "bad_transport_version";
    case DecodeError::bad_icrc: return "bad_icrc";
    case DecodeError::bad_padding: return "bad_padding";
    case DecodeError::unsupported_opcode: return "unsupported_opcode";
  }
  return "unknown";
}

DecodeError decode_packet(const FlowAddress& as_received, std::span<const std::uint8_t> udp_payload,
                          DecodedPacket& out) noexcept {
  if (udp_payload.size() < wire::bth_size + wire::icrc_size) return DecodeError::too_short;
  const std::size_t covered_size = udp_payload.size() - wire::icrc_size;
  const std::uint32_t received_icrc = wire::load_icrc(udp_payload.data() + covered_size);
  const auto bth_bytes = udp_payload.first(wire::bth_size);
  const auto after_bth = udp_payload.subspan(wire::bth_size, covered_size - wire::bth_size);
  // Checked before any field is trusted: a corrupted opcode or PadCnt is corruption, not a
  // protocol error.
  if (icrc_over(as_received, bth_bytes, after_bth, 0) != received_icrc)
    return DecodeError::bad_icrc;

  const std::uint8_t* p = udp_payload.data();
  if ((p[1] & 0x0f) != 0) return DecodeError::bad_transport_version;
  const std::uint8_t opcode = p[0];
  if (!is_supported_opcode(opcode)) return DecodeError::unsupported_opcode;
  const std::size_t header_bytes = headers_size(opcode);
  if (covered_size < header_bytes) return DecodeError::too_short;

  // Headers are multiples of 4 bytes, so a correctly padded payload leaves the total one too.
  const std::size_t padded_payload_size = covered_size - header_bytes;
  const std::uint8_t pad = pad_count_of(bth_bytes);
  if (padded_payload_size % 4 != 0 || pad > padded_payload_size) return DecodeError::bad_padding;

  PacketHeaders h;
  h.bth.opcode = opcode;
  h.bth.solicited = (p[1] & 0x80) != 0;
  h.bth.migreq = (p[1] & 0x40) != 0;
  h.bth.pad_count = pad;
  h.bth.pkey = load_be16(p + 2);
  h.bth.fecn = (p[4] & 0x80) != 0;
  h.bth.becn = (p[4] & 0x40) != 0;
  h.bth.dest_qp = load_be24(p + 5);
  h.bth.ack_request = (p[8] & 0x80) != 0;
  h.bth.psn = load_be24(p + 9);
  p += wire::bth_size;

  // The CNP's reserved bytes carry nothing; receivers ignore them.
  if (opcode != op::cnp) {
    if (op::transport(opcode) == op::transport_ud) {
      h.deth.qkey = load_be32(p);
      h.deth.src_qp = load_be24(p + 5);
      p += deth_size;
    }
    if (op::has_reth(opcode)) {
      h.reth.va = load_be64(p);
      h.reth.rkey = load_be32(p + 8);
      h.reth.length = load_be32(p + 12);
      p += wire::reth_size;
    }
    if (op::has_aeth(opcode)) {
      h.aeth.syndrome = p[0];
      h.aeth.msn = load_be24(p + 1);
      p += wire::aeth_size;
    }
    if (op::has_immdt(opcode)) h.immdt = load_be32(p);
  }

  out.headers = h;
  out.payload = udp_payload.subspan(header_bytes, padded_payload_size - pad);
  return DecodeError::none;
}

}  // namespace rocehil::traffic::soft
