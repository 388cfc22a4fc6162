#include "soft/pfc_receiver.hpp"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fstream>

#include "rocehil/common/roce_wire.hpp"

namespace rocehil::traffic::soft {

double netdev_speed_gbps(const std::string& netdev) {
  if (netdev.empty() || netdev.find('/') != std::string::npos) return 0;
  std::ifstream file("/sys/class/net/" + netdev + "/speed");
  long long mbps = 0;
  if (!(file >> mbps) || mbps <= 0) return 0;  // -1, or an error reading it: not known
  return static_cast<double>(mbps) / 1000.0;
}

namespace {

double quantum_speed(const std::string& netdev, double port_gbps) {
  if (port_gbps > 0) return port_gbps;  // the pacer's speed
  const double netdev_gbps = netdev_speed_gbps(netdev);
  return netdev_gbps > 0 ? netdev_gbps : 100.0;  // DCQCN's line rate when none is known
}

int open_mac_control_socket(const std::string& netdev) {
  const unsigned ifindex = ::if_nametoindex(netdev.c_str());
  if (ifindex == 0) return -1;
  // The protocol argument makes the kernel hand this socket only 0x8808 frames: no copy of the
  // RoCE traffic itself.
  const std::uint16_t protocol = htons(wire::ethertype::mac_control);
  const int fd = ::socket(AF_PACKET, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, protocol);
  if (fd < 0) return -1;
  sockaddr_ll local{};
  local.sll_family = AF_PACKET;
  local.sll_protocol = protocol;
  local.sll_ifindex = static_cast<int>(ifindex);
  if (::bind(fd, reinterpret_cast<const sockaddr*>(&local), sizeof local) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

}  // namespace

PfcReceiver::PfcReceiver(const std::string& netdev, bool loopback, double port_gbps,
                         std::uint8_t obeyed)
    : port_gbps_(quantum_speed(netdev, port_gbps)), state_(port_gbps_, obeyed) {
  if (!netdev.empty() && !loopback) fd_ = open_mac_control_socket(netdev);
}

PfcReceiver::~PfcReceiver() {
  if (fd_ >= 0) ::close(fd_);
}

void PfcReceiver::poll(std::uint64_t now_ns) noexcept {
  if (fd_ < 0 || now_ns < next_check_ns_) return;
  next_check_ns_ = now_ns + check_interval_ns;
  while (true) {
    sockaddr_ll from{};
    socklen_t from_length = sizeof from;
    const ssize_t n = ::recvfrom(fd_, buffer_.data(), buffer_.size(), MSG_DONTWAIT,
                                 reinterpret_cast<sockaddr*>(&from), &from_length);
    if (n <= 0) return;
    // A frame this host sends out of the netdev (an injector on the same port) is no request
    // to this port: its MAC never receives it.
    if (from.sll_pkttype == PACKET_OUTGOING) continue;
    const auto request = parse_pause_frame({buffer_.data(), static_cast<std::size_t>(n)});
    if (!request) continue;
    const std::lock_guard lock(mutex_);
    state_.on_frame(*request, now_ns);
  }
}

std::map<std::string, std::uint64_t> PfcReceiver::counters(std::uint64_t now_ns) const {
  std::map<std::string, std::uint64_t> values;
  if (fd_ < 0) return values;
  const std::lock_guard lock(mutex_);
  for (std::size_t p = 0; p < PriorityPause::priorities; ++p) {
    values[fmt::format("rx_prio{}_pause", p)] = state_.frames(p);
    values[fmt::format("rx_prio{}_pause_duration", p)] = state_.paused_ns(p, now_ns) / 1000;
  }
  values["rx_pause_ctrl_phy"] = state_.link_pause_frames();
  return values;
}

}  // namespace rocehil::traffic::soft
