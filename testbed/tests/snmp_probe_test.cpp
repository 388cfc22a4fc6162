#include "switches/snmp_probe.hpp"

#include <gtest/gtest.h>

namespace rocehil::testbed {
namespace {

std::string bytes(std::initializer_list<int> values) {
  std::string out;
  for (int v : values) out += static_cast<char>(v);
  return out;
}

TEST(SnmpProbe, RequestIsTheGetNetSnmpSends) {
  // snmpget -d -v2c -c public 1.3.6.1.2.1.1.5.0 sent these 43 bytes (request-id 0x61b64435).
  const std::string expected = bytes(
      {0x30, 0x29, 0x02, 0x01, 0x01, 0x04, 0x06, 'p',  'u',  'b',  'l',  'i',  'c',  0xa0, 0x1c,
       0x02, 0x04, 0x61, 0xb6, 0x44, 0x35, 0x02, 0x01, 0x00, 0x02, 0x01, 0x00, 0x30, 0x0e, 0x30,
       0x0c, 0x06, 0x08, 0x2b, 0x06, 0x01, 0x02, 0x01, 0x01, 0x05, 0x00, 0x05, 0x00});
  EXPECT_EQ(sysname_request("public", 0x61b64435u), expected);
  // A small id takes one byte; one with its top bit set a leading zero.
  EXPECT_EQ(sysname_request("public", 7).substr(15, 3), bytes({0x02, 0x01, 0x07}));
  EXPECT_EQ(sysname_request("public", 0x80).substr(15, 4), bytes({0x02, 0x02, 0x00, 0x80}));
}

std::string response(std::uint32_t id, int error_status, const std::string& value) {
  std::string varbind = bytes({0x06, 0x08, 0x2b, 0x06, 0x01, 0x02, 0x01, 0x01, 0x05, 0x00}) + value;
  varbind = bytes({0x30, static_cast<int>(varbind.size())}) + varbind;
  const std::string varbinds = bytes({0x30, static_cast<int>(varbind.size())}) + varbind;
  std::string pdu =
      bytes({0x02, 0x04, static_cast<int>(id >> 24), static_cast<int>((id >> 16) & 0xff),
             static_cast<int>((id >> 8) & 0xff), static_cast<int>(id & 0xff), 0x02, 0x01,
             error_status, 0x02, 0x01, 0x00}) +
      varbinds;
  pdu = bytes({0xa2, static_cast<int>(pdu.size())}) + pdu;
  std::string message = bytes({0x02, 0x01, 0x01, 0x04, 0x01, 'x'}) + pdu;
  return bytes({0x30, static_cast<int>(message.size())}) + message;
}

TEST(SnmpProbe, ResponseGivesTheSysName) {
  std::string problem;
  const auto name = parse_sysname_response(response(0x01020304, 0, bytes({0x04, 2, 'l', '1'})),
                                           0x01020304, problem);
  ASSERT_TRUE(name) << problem;
  EXPECT_EQ(*name, "l1");
}

TEST(SnmpProbe, OtherDatagramsAreNotTheAnswer) {
  std::string problem;
  const std::string ok = response(0x01020304, 0, bytes({0x04, 2, 'l', '1'}));
  EXPECT_FALSE(parse_sysname_response(ok, 0x01020305, problem));
  EXPECT_EQ(problem, "an answer to another request");
  EXPECT_FALSE(
      parse_sysname_response(response(0x01020304, 2, bytes({0x05, 0})), 0x01020304, problem));
  EXPECT_EQ(problem, "SNMP error-status 2");
  EXPECT_FALSE(
      parse_sysname_response(response(0x01020304, 0, bytes({0x80, 0})), 0x01020304, problem));
  EXPECT_EQ(problem, "sysName.0: no such object");
  for (std::size_t cut = 0; cut < ok.size(); ++cut)
    EXPECT_FALSE(parse_sysname_response(ok.substr(0, cut), 0x01020304, problem)) << cut;
  // Our own request is not a response.
  EXPECT_FALSE(parse_sysname_response(sysname_request("x", 0x01020304), 0x01020304, problem));
}

}  // namespace
}  // namespace rocehil::testbed
