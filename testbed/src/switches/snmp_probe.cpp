#include "switches/snmp_probe.hpp"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <random>

namespace rocehil::testbed {

namespace {

// sysName.0, BER-encoded: 1.3 as 43, then one byte per arc below 128 (the size given: the last
// arc is a zero byte).
constexpr std::string_view sysname_oid("\x2b\x06\x01\x02\x01\x01\x05\x00", 8);

std::string tlv(unsigned char tag, std::string_view content) {
  std::string out(1, static_cast<char>(tag));
  const std::size_t n = content.size();
  if (n < 0x80) {
    out += static_cast<char>(n);
  } else if (n <= 0xff) {
    out += '\x81';
    out += static_cast<char>(n);
  } else {
    out += '\x82';
    out += static_cast<char>((n >> 8) & 0xff);
    out += static_cast<char>(n & 0xff);
  }
  out += content;
  return out;
}

// A non-negative INTEGER in the fewest bytes that keep its sign bit clear.
std::string integer(std::uint32_t value) {
  std::string bytes;
  for (int shift = 24; shift >= 0; shift -= 8) bytes += static_cast<char>((value >> shift) & 0xff);
  while (bytes.size() > 1 && bytes[0] == '\0' && (static_cast<unsigned char>(bytes[1]) & 0x80) == 0)
    bytes.erase(0, 1);
  if ((static_cast<unsigned char>(bytes[0]) & 0x80) != 0) bytes.insert(0, 1, '\0');
  return tlv(0x02, bytes);
}

// Reads one TLV off the front of `in`.
struct Tlv {
  unsigned char tag = 0;
  std::string_view content;
};
std::optional<Tlv> take(std::string_view& in) {
  if (in.size() < 2) return std::nullopt;
  Tlv t;
  t.tag = static_cast<unsigned char>(in[0]);
  std::size_t length = static_cast<unsigned char>(in[1]);
  std::size_t header = 2;
  if (length & 0x80) {
    const std::size_t bytes = length & 0x7f;
    if (bytes == 0 || bytes > 4 || in.size() < 2 + bytes) return std::nullopt;
    length = 0;
    for (std::size_t k = 0; k < bytes; ++k)
      length = (length << 8) | static_cast<unsigned char>(in[2 + k]);
    header += bytes;
  }
  if (in.size() - header < length) return std::nullopt;
  t.content = in.substr(header, length);
  in.remove_prefix(header + length);
  return t;
}

std::optional<long long> integer_value(const Tlv& t) {
  if (t.tag != 0x02 || t.content.empty() || t.content.size() > 8) return std::nullopt;
  long long v = static_cast<signed char>(t.content[0]);  // the sign comes from the first byte
  for (std::size_t k = 1; k < t.content.size(); ++k)
    v = v * 256 + static_cast<unsigned char>(t.content[k]);
  return v;
}

}  // namespace

std::string sysname_request(std::string_view community, std::uint32_t request_id) {
  const std::string varbind = tlv(0x30, tlv(0x06, sysname_oid) + tlv(0x05, ""));
  const std::string pdu =
      tlv(0xa0, integer(request_id) + integer(0) + integer(0) + tlv(0x30, varbind));
  return tlv(0x30, integer(1) + tlv(0x04, community) + pdu);
}

std::optional<std::string> parse_sysname_response(std::string_view datagram,
                                                  std::uint32_t request_id, std::string& problem) {
  problem = "not an SNMPv2c response";
  auto message = take(datagram);
  if (!message || message->tag != 0x30) return std::nullopt;
  std::string_view m = message->content;
  const auto version = take(m);
  const auto community = take(m);
  auto pdu = take(m);
  if (!version || integer_value(*version) != 1 || !community || community->tag != 0x04 || !pdu ||
      pdu->tag != 0xa2)
    return std::nullopt;
  std::string_view p = pdu->content;
  const auto id = take(p);
  const auto status = take(p);
  const auto index = take(p);
  auto varbinds = take(p);
  if (!id || !status || !index || !varbinds || varbinds->tag != 0x30) return std::nullopt;
  if (integer_value(*id) != static_cast<long long>(request_id)) {
    problem = "an answer to another request";
    return std::nullopt;
  }
  if (const auto e = integer_value(*status); e != 0) {
    problem = fmt::format("SNMP error-status {}", e ? *e : -1);
    return std::nullopt;
  }
  std::string_view vs = varbinds->content;
  auto varbind = take(vs);
  if (!varbind || varbind->tag != 0x30) return std::nullopt;
  std::string_view v = varbind->content;
  const auto oid = take(v);
  const auto value = take(v);
  if (!oid || oid->tag != 0x06 || oid->content != sysname_oid || !value) return std::nullopt;
  if (value->tag == 0x80 || value->tag == 0x81) {
    problem = "sysName.0: no such object";
    return std::nullopt;
  }
  if (value->tag != 0x04) return std::nullopt;
  problem.clear();
  return std::string(value->content);
}

bool snmp_answers(const std::string& address, std::string_view community, int timeout_ms,
                  std::string& detail) {
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(161);
  if (::inet_pton(AF_INET, address.c_str(), &sa.sin_addr) != 1) {
    detail = "no address";
    return false;
  }
  const int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    detail = std::strerror(errno);
    return false;
  }
  std::random_device random;
  const std::uint32_t request_id = random() & 0x7fffffffu;  // INTEGER: positive, 31 bits
  const std::string request = sysname_request(community, request_id);
  bool ok = false;
  detail = "no answer within the timeout";
  if (::connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0 ||
      ::send(fd, request.data(), request.size(), 0) < 0) {
    detail = std::strerror(errno);
  } else {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    while (true) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                            deadline - std::chrono::steady_clock::now())
                            .count();
      pollfd p{fd, POLLIN, 0};
      if (left <= 0 || ::poll(&p, 1, static_cast<int>(left)) <= 0) break;
      char buffer[1500];
      const ssize_t got = ::recv(fd, buffer, sizeof buffer, 0);
      if (got < 0) {
        // ECONNREFUSED: an ICMP port unreachable, nothing listens on the port.
        detail = errno == ECONNREFUSED ? "nothing listens on port 161" : std::strerror(errno);
        break;
      }
      std::string problem;
      const auto name = parse_sysname_response(
          std::string_view(buffer, static_cast<std::size_t>(got)), request_id, problem);
      if (name) {
        detail = "sysName " + *name;
        ok = true;
        break;
      }
      detail = problem;  // a stray datagram: keep waiting for ours
    }
  }
  ::close(fd);
  return ok;
}

}  // namespace rocehil::testbed
