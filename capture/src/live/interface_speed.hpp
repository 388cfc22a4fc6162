#pragma once

// The speed a Linux interface reports, for pcapng's if_speed and for turning pause quanta into
// time. Header-only: both the pcap backend and the DPDK library (a separate archive linked
// after this one) use it.

#include <cstdint>
#include <fstream>
#include <string>

namespace rocehil::capture {

// Bits per second from /sys/class/net/IF/speed; 0 when the interface reports none (veth gives
// -1 or EINVAL) or the name could leave that directory.
inline std::uint64_t interface_speed_bps(const std::string& iface) {
  if (iface.empty() || iface.find('/') != std::string::npos) return 0;
  std::ifstream in("/sys/class/net/" + iface + "/speed");
  long long mbps = -1;
  if (!(in >> mbps) || mbps <= 0) return 0;
  return static_cast<std::uint64_t>(mbps) * 1'000'000;
}

}  // namespace rocehil::capture
