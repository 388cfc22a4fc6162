#include "rocehil/capture/frame_builder.hpp"

#include <cstring>

#include "frames/ip_header.hpp"
#include "rocehil/common/byte_order.hpp"
#include "rocehil/common/icrc.hpp"
#include "rocehil/common/roce_wire.hpp"

namespace rocehil::capture {

namespace w = rocehil::wire;

namespace {

std::size_t extended_headers_size(std::uint8_t opcode) noexcept {
  if (opcode == w::opcode::cnp) return w::cnp_reserved_size;
  std::size_t n = 0;
  const std::uint8_t transport = w::opcode::transport(opcode);
  if (transport == w::opcode::transport_rd) n += 12;
  if (transport == w::opcode::transport_ud) n += 8;
  if (w::opcode::has_reth(opcode)) n += w::reth_size;
  if (w::opcode::has_aeth(opcode)) n += w::aeth_size;
  if (w::opcode::has_immdt(opcode)) n += w::immdt_size;
  return n;
}

// Header of a MAC control frame to the 802.1D reserved group address, zero padded to 60 bytes.
void mac_control_frame(std::uint8_t* p, const MacAddress& src_mac) noexcept {
  static constexpr MacAddress pause_group{0x01, 0x80, 0xc2, 0x00, 0x00, 0x01};
  std::memcpy(p, pause_group.data(), 6);
  std::memcpy(p + 6, src_mac.data(), 6);
  store_be16(p + 12, w::ethertype::mac_control);
}

}  // namespace

std::size_t frame_size(const RoceFrame& f) noexcept {
  const std::size_t ip = f.src.is_v4() ? 20 : 40;
  return w::ethernet_header_size + f.vlans.size() * w::vlan_tag_size + ip + w::udp_header_size +
         w::bth_size + extended_headers_size(f.bth.opcode) + f.payload_size + w::icrc_size;
}

std::size_t build(const RoceFrame& f, std::span<std::uint8_t> out) noexcept {
  const std::size_t size = frame_size(f);
  if (out.size() < size) return 0;
  std::uint8_t* p = out.data();
  std::memcpy(p, f.dst_mac.data(), 6);
  std::memcpy(p + 6, f.src_mac.data(), 6);
  std::size_t off = 12;
  for (const auto& [tpid, tci] : f.vlans) {
    store_be16(p + off, tpid);
    store_be16(p + off + 2, tci);
    off += w::vlan_tag_size;
  }
  const bool v4 = f.src.is_v4();
  store_be16(p + off, v4 ? w::ethertype::ipv4 : w::ethertype::ipv6);
  off += 2;

  std::uint8_t* ip = p + off;
  const std::size_t ip_header = v4 ? 20 : 40;
  const std::size_t udp_len = size - off - ip_header;
  const std::uint8_t tos = static_cast<std::uint8_t>(f.dscp << 2 | (f.ecn & 0x3));
  write_ip_header(ip, f.src, f.dst, w::ip_proto::udp, tos, f.ttl, udp_len);

  std::uint8_t* udp = ip + ip_header;
  store_be16(udp, f.udp_src_port);
  store_be16(udp + 2, w::roce_v2_udp_port);
  store_be16(udp + 4, static_cast<std::uint16_t>(udp_len));
  store_be16(udp + 6, 0);  // RoCEv2 senders leave the UDP checksum zero (IPv6 too, RFC 6936)

  std::uint8_t* bth = udp + w::udp_header_size;
  const Bth& b = f.bth;
  bth[0] = b.opcode;
  bth[1] = static_cast<std::uint8_t>((b.solicited ? 0x80 : 0) | (b.migreq ? 0x40 : 0) |
                                     (b.pad_count & 0x3) << 4 | (b.tver & 0x0f));
  store_be16(bth + 2, b.pkey ? b.pkey : 0xffff);
  bth[4] = static_cast<std::uint8_t>((b.fecn ? 0x80 : 0) | (b.becn ? 0x40 : 0));
  store_be24(bth + 5, b.dest_qp);
  bth[8] = b.ack_req ? 0x80 : 0;
  store_be24(bth + 9, b.psn);

  std::uint8_t* x = bth + w::bth_size;
  if (b.opcode == w::opcode::cnp) {
    std::memset(x, 0, w::cnp_reserved_size);
    x += w::cnp_reserved_size;
  } else {
    const std::uint8_t transport = w::opcode::transport(b.opcode);
    const std::size_t deth = transport == w::opcode::transport_rd   ? 12
                             : transport == w::opcode::transport_ud ? 8
                                                                    : 0;
    std::memset(x, 0, deth);
    x += deth;
    if (w::opcode::has_reth(b.opcode)) {
      store_be64(x, f.reth.va);
      store_be32(x + 8, f.reth.rkey);
      store_be32(x + 12, f.reth.dma_length);
      x += w::reth_size;
    }
    if (w::opcode::has_aeth(b.opcode)) {
      x[0] = f.aeth.syndrome;
      store_be24(x + 1, f.aeth.msn);
      x += w::aeth_size;
    }
    if (w::opcode::has_immdt(b.opcode)) {
      store_be32(x, f.immdt);
      x += w::immdt_size;
    }
  }
  std::memset(x, f.payload_fill, f.payload_size);
  x += f.payload_size;

  const auto crc = w::icrc(std::span<const std::uint8_t>(ip, static_cast<std::size_t>(x - ip)));
  w::store_icrc(x, crc.value_or(0));
  return size;
}

std::vector<std::uint8_t> build(const RoceFrame& f) {
  std::vector<std::uint8_t> out(frame_size(f));
  build(f, out);
  return out;
}

RoceFrame cnp_frame(const IpAddress& src, const IpAddress& dst, std::uint32_t dest_qp) {
  RoceFrame f;
  f.src = src;
  f.dst = dst;
  f.dscp = 48;
  f.ecn = 0b01;
  f.bth = Bth{.opcode = w::opcode::cnp, .becn = true, .dest_qp = dest_qp, .psn = 0};
  return f;
}

std::vector<std::uint8_t> build_pfc(std::uint16_t class_enable,
                                    const std::array<std::uint16_t, 8>& quanta,
                                    const MacAddress& src_mac) {
  std::vector<std::uint8_t> out(60);
  std::uint8_t* p = out.data();
  mac_control_frame(p, src_mac);
  store_be16(p + 14, w::mac_control::pfc);
  store_be16(p + 16, class_enable);
  for (std::size_t i = 0; i < 8; ++i) store_be16(p + 18 + 2 * i, quanta[i]);
  return out;
}

std::vector<std::uint8_t> build_pause(std::uint16_t quanta, const MacAddress& src_mac) {
  std::vector<std::uint8_t> out(60);
  std::uint8_t* p = out.data();
  mac_control_frame(p, src_mac);
  store_be16(p + 14, w::mac_control::pause);
  store_be16(p + 16, quanta);
  return out;
}

}  // namespace rocehil::capture
