#include "dataplane/event_loop.hpp"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "rocehil/common/error.hpp"

namespace rocehil::testbed::dataplane {

namespace {
constexpr std::uint64_t tag_timer = EventWait::reserved_tags;
constexpr std::uint64_t tag_signals = EventWait::reserved_tags + 1;
}  // namespace

std::uint64_t now_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000ull +
         static_cast<std::uint64_t>(ts.tv_nsec);
}

void fail(std::string_view what) {
  throw system_error(std::string(what), errno);
}

PacketPort open_packet_port(const std::string& ifname, const std::string& config_path) {
  PacketPort port;
  port.ifindex = static_cast<int>(if_nametoindex(ifname.c_str()));
  if (port.ifindex == 0)
    throw input_error(fmt::format(
        "{}: port {} is not in this namespace; bring the testbed up again", config_path, ifname));
  port.socket = Fd(socket(AF_PACKET, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, htons(ETH_P_ALL)));
  if (port.socket.get() < 0) fail("socket(AF_PACKET)");
  sockaddr_ll address{};
  address.sll_family = AF_PACKET;
  address.sll_protocol = htons(ETH_P_ALL);
  address.sll_ifindex = port.ifindex;
  if (bind(port.socket.get(), reinterpret_cast<sockaddr*>(&address), sizeof address) != 0)
    fail(fmt::format("bind to {}", ifname));
  // What this port sends (the process's frames, the kernel's) is not for the process to take.
  const int one = 1;
  setsockopt(port.socket.get(), SOL_PACKET, PACKET_IGNORE_OUTGOING, &one, sizeof one);
  // Room for a few milliseconds at line rate while the process is away (a shared 2-core machine).
  const int buffer = 8 << 20;
  setsockopt(port.socket.get(), SOL_SOCKET, SO_RCVBUFFORCE, &buffer, sizeof buffer);
  setsockopt(port.socket.get(), SOL_SOCKET, SO_SNDBUFFORCE, &buffer, sizeof buffer);
  ifreq request{};
  std::snprintf(request.ifr_name, IFNAMSIZ, "%s", ifname.c_str());
  if (ioctl(port.socket.get(), SIOCGIFHWADDR, &request) != 0)
    fail(fmt::format("SIOCGIFHWADDR {}", ifname));
  std::memcpy(port.mac.data(), request.ifr_hwaddr.sa_data, 6);
  return port;
}

EventWait::EventWait() {
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGHUP);
  if (sigprocmask(SIG_BLOCK, &signals, nullptr) != 0) fail("sigprocmask");
  signals_ = Fd(signalfd(-1, &signals, SFD_NONBLOCK | SFD_CLOEXEC));
  timer_ = Fd(timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC));
  epoll_ = Fd(epoll_create1(EPOLL_CLOEXEC));
  if (signals_.get() < 0 || timer_.get() < 0 || epoll_.get() < 0) fail("signalfd/timerfd/epoll");
  watch(signals_.get(), tag_signals);
  watch(timer_.get(), tag_timer);
}

void EventWait::watch(int fd, std::uint64_t tag, std::uint32_t events) {
  epoll_event event{};
  event.events = events;
  event.data.u64 = tag;
  if (epoll_ctl(epoll_.get(), EPOLL_CTL_ADD, fd, &event) != 0) fail("epoll_ctl add");
}

void EventWait::change(int fd, std::uint64_t tag, std::uint32_t events) {
  epoll_event event{};
  event.events = events;
  event.data.u64 = tag;
  if (epoll_ctl(epoll_.get(), EPOLL_CTL_MOD, fd, &event) != 0) fail("epoll_ctl mod");
}

void EventWait::forget(int fd) {
  epoll_ctl(epoll_.get(), EPOLL_CTL_DEL, fd, nullptr);
}

std::span<const epoll_event> EventWait::wait(std::uint64_t deadline_ns) {
  if (deadline_ns != armed_) {
    itimerspec spec{};
    if (deadline_ns != 0) {
      spec.it_value.tv_sec = static_cast<time_t>(deadline_ns / 1'000'000'000ull);
      spec.it_value.tv_nsec = static_cast<long>(deadline_ns % 1'000'000'000ull);
    }
    timerfd_settime(timer_.get(), TFD_TIMER_ABSTIME, &spec, nullptr);
    armed_ = deadline_ns;
  }
  const int ready = epoll_wait(epoll_.get(), events_.data(), static_cast<int>(events_.size()), -1);
  if (ready < 0) {
    if (errno == EINTR) return {};
    fail("epoll_wait");
  }
  // The caller's events first, in order; the timer's and the signals' are taken here.
  std::size_t kept = 0;
  for (int e = 0; e < ready; ++e) {
    const std::uint64_t tag = events_[e].data.u64;
    if (tag == tag_timer) {
      std::uint64_t expirations = 0;
      if (read(timer_.get(), &expirations, sizeof expirations) < 0) { /* a spurious wake */
      }
      armed_ = 0;
    } else if (tag == tag_signals) {
      signalfd_siginfo info{};
      while (read(signals_.get(), &info, sizeof info) == sizeof info) {
        if (info.ssi_signo == SIGHUP)
          reload_ = true;
        else
          stop_ = true;
      }
    } else {
      events_[kept++] = events_[e];
    }
  }
  return {events_.data(), kept};
}

}  // namespace rocehil::testbed::dataplane
