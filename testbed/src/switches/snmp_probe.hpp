#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace rocehil::testbed {

// Whether a switch's snmpd answers: an SNMPv2c GET of sysName.0 over UDP, built and read here
// (a few dozen bytes of BER) so `up` and `status` need no SNMP library or client tool.

// The GetRequest datagram for sysName.0 (1.3.6.1.2.1.1.5.0).
std::string sysname_request(std::string_view community, std::uint32_t request_id);

// The sysName a GetResponse to `request_id` carries; nullopt and `problem` set when the datagram
// is not that answer (another request's, an SNMP error, not BER).
std::optional<std::string> parse_sysname_response(std::string_view datagram,
                                                  std::uint32_t request_id, std::string& problem);

// Sends the request to address:161 and waits up to `timeout_ms` for the answer. True when it
// came; `detail` gets "sysName l1" or why there is none (a v2c agent ignores a wrong community:
// that is no answer).
bool snmp_answers(const std::string& address, std::string_view community, int timeout_ms,
                  std::string& detail);

}  // namespace rocehil::testbed
