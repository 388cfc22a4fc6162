#pragma once

// Workarounds for DPDK 22.11's net_af_packet driver, which reads a Linux interface through
// AF_PACKET sockets of its own: the drops it does not report, and the outgoing frames it should
// not see.

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

namespace rocehil::capture::dpdk {

// The sockets this process has open (file descriptors), to tell which ones rte_eal_init made.
std::vector<int> open_sockets();
// AF_PACKET TPACKET_V2 sockets opened since `before`: {fd, ifindex}.
std::vector<std::pair<int, int>> new_packet_sockets(const std::vector<int>& before);
// Frames the kernel dropped on this socket since the last call (reading resets the count).
std::uint64_t take_packet_drops(int fd) noexcept;
// Frames the kernel moved from this socket to another of its fanout group because its ring was
// nearly full (PACKET_FANOUT_FLAG_ROLLOVER), since the socket was made; none without rollover.
std::optional<std::uint64_t> packet_rollovers(int fd) noexcept;
// Makes the socket ignore frames the host sends out of the interface.
void drop_outgoing(int fd) noexcept;

}  // namespace rocehil::capture::dpdk
