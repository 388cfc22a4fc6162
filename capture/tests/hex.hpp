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

// Remote mirrors of scapy_write_only, built by scapy 2.5 (scapy.contrib.erspan, scapy's GRE):
// Ether(02:00:00:00:00:5e > 02:00:00:00:00:c0)/IP(198.19.1.201 > 198.19.0.2, id 0, DF, TTL 64)/
// GRE(seqnum_present, sequence 7)/ERSPAN_II(ver 1, session 5, vlan 100, cos 3, t 1,
// index 0x12345)/the frame.
inline const char* scapy_erspan2 =
    "0200000000c002000000005e08004500007e00004000402fac5fc61301c9c6130002100088be0000000710646405"
    "000123450200000000020200000000010800456a004c000040004011ae0fc6120001c6120002c00012b700380000"
    "0a00ffff000001018000000500000000000100000000123400000010ababababababababababababababababed882"
    "015";
// Ether/IPv6(2001:db8::5e > 2001:db8::c0, hop limit 64)/GRE(sequence 0xfffffffe)/
// ERSPAN_III(session 1023, vlan 7, timestamp 123456789, gra 2 (IEEE 1588), d 1, o 1)/
// ERSPAN_PlatformSpecific(platf_id 3, info1 0x1abc (port index), info2 1764158400 (seconds))/
// the frame.
inline const char* scapy_erspan3 =
    "0200000000c002000000005e86dd6000000000762f4020010db800000000000000000000005e20010db800000000"
    "00000000000000c0100022ebfffffffe200703ff075bcd150000000d0c001abc6926ebc002000000000202000000"
    "00010800456a004c000040004011ae0fc6120001c6120002c00012b7003800000a00ffff00000101800000050000"
    "0000000100000000123400000010ababababababababababababababababed882015";
// Ether/IP(as above)/GRE(key 42, sequence 3, proto 0x6558)/the frame.
inline const char* scapy_gre_teb =
    "0200000000c002000000005e08004500007a00004000402fac63c61301c9c6130002300065580000002a00000003"
    "0200000000020200000000010800456a004c000040004011ae0fc6120001c6120002c00012b7003800000a00ffff"
    "000001018000000500000000000100000000123400000010ababababababababababababababababed882015";

}  // namespace rocehil::capture::testing
