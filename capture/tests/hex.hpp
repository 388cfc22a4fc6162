#pragma once

// Test helper: frames written as hex, as scapy's raw(p).hex() prints them.

#include <string>
#include <vector>

#include <cstdint>

namespace rocehil::capture::testing {

inline std::vector<std::uint8_t> from_hex(const std::string& hex) {
  std::vector<std::uint8_t> out;
  for (std::size_t i = 0; i + 1 < hex.size(); i += 2)
    out.push_back(static_cast<std::uint8_t>(std::stoul(hex.substr(i, 2), nullptr, 16)));
  return out;
}

// Built by scapy 2.5 (an independent implementation), ICRC included:
// Ether/IP(198.18.0.1 > 198.18.0.2, DSCP 26, ECT(0), DF, TTL 64)/UDP(49152 > 4791)/
// BTH(RC_RDMA_WRITE_ONLY, dest QP 0x101, PSN 5, AckReq)/RETH(va 0x10000, rkey 0x1234, len 16)/
// 16 bytes of 0xab.
inline const char* scapy_write_only =
    "0200000000020200000000010800456a004c000040004011ae0fc6120001c6120002c00012b7003800000a00ffff"
    "000001018000000500000000000100000000123400000010ababababababababababababababababed882015";

// Ether/802.1ad(vid 100)/802.1Q(vid 200, pcp 3)/IP(198.18.0.3 > 198.18.0.4, CE)/UDP(50000 > 4791)/
// BTH(RC_ACKNOWLEDGE, dest QP 0xabcdef, PSN 0x123456)/AETH(NAK 0x62 remote access error, MSN
// 0x102).
inline const char* scapy_qinq_nak =
    "02000000000202000000000188a80064810060c80800456b0030000040004011ae26c6120003c6120004c35012b7"
    "001c00001100ffff00abcdef00123456620001021e58afc0";

}  // namespace rocehil::capture::testing
