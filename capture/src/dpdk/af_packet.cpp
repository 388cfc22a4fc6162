#include "dpdk/af_packet.hpp"

#include <linux/filter.h>
#include <linux/if_packet.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <iterator>

namespace rocehil::capture::dpdk {

std::vector<int> open_sockets() {
  std::vector<int> fds;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/fd", ec)) {
    int fd = -1;
    const std::string name = entry.path().filename().string();
    if (std::from_chars(name.data(), name.data() + name.size(), fd).ec != std::errc()) continue;
    struct stat st {};
    if (fstat(fd, &st) == 0 && S_ISSOCK(st.st_mode)) fds.push_back(fd);
  }
  return fds;
}

// net_af_packet in DPDK 22.11 never reads PACKET_STATISTICS, so frames the kernel dropped because
// its ring was full appear nowhere in rte_eth_stats (DPDK 25.03 added them as imissed). Its
// sockets are found instead: AF_PACKET, TPACKET_V2 (libpcap uses V3), made during rte_eal_init.
std::vector<std::pair<int, int>> new_packet_sockets(const std::vector<int>& before) {
  std::vector<std::pair<int, int>> found;
  for (const int fd : open_sockets()) {
    if (std::find(before.begin(), before.end(), fd) != before.end()) continue;
    int domain = 0;
    socklen_t len = sizeof(domain);
    if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &len) != 0 || domain != AF_PACKET) continue;
    int version = -1;
    len = sizeof(version);
    if (getsockopt(fd, SOL_PACKET, PACKET_VERSION, &version, &len) != 0 || version != TPACKET_V2)
      continue;
    sockaddr_ll addr{};
    len = sizeof(addr);
    if (getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) continue;
    found.emplace_back(fd, addr.sll_ifindex);
  }
  return found;
}

// Frames the kernel dropped on this socket since the last call (reading resets the count).
std::uint64_t take_packet_drops(int fd) noexcept {
  tpacket_stats st{};
  socklen_t len = sizeof(st);
  if (getsockopt(fd, SOL_PACKET, PACKET_STATISTICS, &st, &len) != 0) return 0;
  return st.tp_drops;
}

std::optional<std::uint64_t> packet_rollovers(int fd) noexcept {
  tpacket_rollover_stats st{};
  socklen_t len = sizeof(st);
  // EINVAL: the socket has no rollover (not in a group with PACKET_FANOUT_FLAG_ROLLOVER).
  if (getsockopt(fd, SOL_PACKET, PACKET_ROLLOVER_STATS, &st, &len) != 0) return std::nullopt;
  return static_cast<std::uint64_t>(st.tp_all);
}

// A packet socket also sees what the host sends out of the interface; a DPDK port, like the NIC
// it stands for, receives only what arrives (and the pcap backend keeps inbound frames by
// default). PACKET_IGNORE_OUTGOING has no effect on net_af_packet's sockets, which join a fanout
// group, so a socket filter drops frames of type PACKET_OUTGOING instead. Should it fail,
// outbound frames show: nothing is lost.
void drop_outgoing(int fd) noexcept {
  sock_filter code[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, static_cast<std::uint32_t>(SKF_AD_OFF + SKF_AD_PKTTYPE)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, PACKET_OUTGOING, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, 0),
      BPF_STMT(BPF_RET | BPF_K, 0xffffffffu),
  };
  const sock_fprog program{.len = static_cast<unsigned short>(std::size(code)), .filter = code};
  setsockopt(fd, SOL_SOCKET, SO_ATTACH_FILTER, &program, sizeof(program));
}

}  // namespace rocehil::capture::dpdk
