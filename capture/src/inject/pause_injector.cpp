#include "rocehil/capture/pause_injector.hpp"

#include <fmt/format.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <net/if_arp.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cmath>
#include <cstring>

#include "rocehil/common/clock.hpp"
#include "rocehil/common/error.hpp"

namespace rocehil::capture {

namespace {

constexpr double max_pps = 10'000'000;
// A year of frames: long soak tests fit, and frame counts stay far from overflowing.
constexpr double max_duration_s = 365.0 * 86400;
// sendmmsg takes the frames that are due in one call; more per call only lengthens the bursts.
constexpr std::size_t max_frames_per_sendmmsg = 256;
// Sleeps end at least this often, so a stop request and the progress callback are never waited
// out behind a slow schedule (--pps 0.1).
constexpr std::int64_t max_sleep_ns = 100'000'000;
constexpr std::int64_t progress_every_ns = 100'000'000;
// A full qdisc (ENOBUFS) or socket buffer (EAGAIN) drains in microseconds on a live link.
constexpr std::int64_t full_queue_pause_ns = 50'000;
// The closing XON matters most after Ctrl-C; it gets this long to find room in the queue.
constexpr std::int64_t xon_patience_ns = 1'000'000'000;

std::string mac_text(const MacAddress& m) {
  return fmt::format("{:02x}:{:02x}:{:02x}:{:02x}:{:02x}:{:02x}", m[0], m[1], m[2], m[3], m[4],
                     m[5]);
}

// Owns one file descriptor; closes it once.
class FileDescriptor {
 public:
  explicit FileDescriptor(int fd) : fd_(fd) {}
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  ~FileDescriptor() {
    if (fd_ >= 0) ::close(fd_);
  }
  int get() const { return fd_; }

 private:
  int fd_;
};

// Linux lets a sleep of an ordinary thread end up to 50 us late (its timer slack), which is
// several periods at 100k frames/s: the injector's thread asks for 1 us while it sends.
class TimerSlack {
 public:
  explicit TimerSlack(unsigned long ns) : saved_(prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0)) {
    prctl(PR_SET_TIMERSLACK, ns, 0, 0, 0);
  }
  TimerSlack(const TimerSlack&) = delete;
  TimerSlack& operator=(const TimerSlack&) = delete;
  ~TimerSlack() {
    if (saved_ > 0) prctl(PR_SET_TIMERSLACK, static_cast<unsigned long>(saved_), 0, 0, 0);
  }

 private:
  int saved_;
};

void sleep_until_monotonic(std::int64_t deadline_ns) {
  timespec ts{.tv_sec = static_cast<time_t>(deadline_ns / 1'000'000'000),
              .tv_nsec = static_cast<long>(deadline_ns % 1'000'000'000)};
  // EINTR (a signal, e.g. Ctrl-C) just returns early: the caller looks at its stop flag.
  clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr);
}

bool is_full_queue(int errnum) {
  return errnum == ENOBUFS || errnum == EAGAIN || errnum == EWOULDBLOCK;
}

std::string send_failure(const std::string& iface, int errnum) {
  return fmt::format("sending on '{}' failed: {}", iface, std::strerror(errnum));
}

Error no_such_interface(const std::string& iface) {
  return Error(ExitCode::bad_input,
               fmt::format("interface '{}' does not exist (see 'ip link show')", iface), ENODEV);
}

// Checks the interface is up, has a link and is Ethernet, binds `fd` to it and returns its MAC.
MacAddress bind_to_interface(int fd, const std::string& iface, int ifindex) {
  ifreq request{};
  std::memcpy(request.ifr_name, iface.c_str(), std::min(iface.size(), sizeof request.ifr_name - 1));
  // ENODEV here and in bind: the interface went away since if_nametoindex found it.
  if (ioctl(fd, SIOCGIFFLAGS, &request) != 0) {
    if (errno == ENODEV) throw no_such_interface(iface);
    throw system_error(fmt::format("cannot read the flags of interface '{}'", iface), errno);
  }
  const auto flags = static_cast<unsigned>(request.ifr_flags);
  if ((flags & IFF_UP) == 0)
    throw input_error(
        fmt::format("interface '{}' is down (bring it up: 'ip link set {} up')", iface, iface));
  if ((flags & IFF_RUNNING) == 0)
    throw input_error(fmt::format(
        "interface '{}' is up but has no link: nothing would receive the frames (check the cable "
        "or the far end; 'ip link show {}' says NO-CARRIER)",
        iface, iface));
  if (ioctl(fd, SIOCGIFHWADDR, &request) != 0)
    throw system_error(fmt::format("cannot read the address of interface '{}'", iface), errno);
  if (request.ifr_hwaddr.sa_family != ARPHRD_ETHER)
    throw input_error(fmt::format(
        "interface '{}' is not an Ethernet interface (ARP hardware type {}); PFC and PAUSE are "
        "Ethernet MAC control frames",
        iface, request.ifr_hwaddr.sa_family));
  MacAddress mac{};
  std::memcpy(mac.data(), request.ifr_hwaddr.sa_data, mac.size());

  // Protocol 0: the socket only sends, so the kernel queues no received frames on it.
  sockaddr_ll address{};
  address.sll_family = AF_PACKET;
  address.sll_protocol = 0;
  address.sll_ifindex = ifindex;
  if (bind(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0) {
    if (errno == ENODEV) throw no_such_interface(iface);
    throw system_error(fmt::format("cannot bind a packet socket to interface '{}'", iface), errno);
  }
  return mac;
}

}  // namespace

void validate(const InjectOptions& o) {
  if (o.iface.empty()) throw input_error("--iface: name the interface to send the frames out of");
  if (!o.pause_8023x) {
    if (o.priorities.empty())
      throw input_error(
          "--priority: name at least one PFC priority to pause (0-7), e.g. --priority 3 or "
          "--priority 3,4");
    for (const unsigned p : o.priorities)
      if (p > 7) throw input_error(fmt::format("--priority {}: PFC priorities are 0-7", p));
  }
  if (!std::isfinite(o.pps) || o.pps <= 0)
    throw input_error(fmt::format(
        "--pps {:.10g}: give a rate above 0 frames per second (at most 10,000,000)", o.pps));
  if (o.pps > max_pps)
    throw input_error(fmt::format("--pps {:.10g}: at most 10,000,000 frames per second", o.pps));
  if (o.count) {
    if (*o.count == 0) throw input_error("--count 0: give at least one frame to send");
  } else {
    if (!std::isfinite(o.duration_s) || o.duration_s <= 0)
      throw input_error(fmt::format(
          "--duration {:.10g}: give seconds above 0, or --count N for a number of frames",
          o.duration_s));
    if (o.duration_s > max_duration_s)
      throw input_error(fmt::format("--duration {:.10g}: at most a year ({:.0f} s)", o.duration_s,
                                    max_duration_s));
    if (frames_to_send(o) == 0)
      throw input_error(fmt::format(
          "--duration {:.10g} at --pps {:.10g} is less than one frame; send for longer, faster, "
          "or give --count",
          o.duration_s, o.pps));
  }
  if (o.src_mac && ((*o.src_mac)[0] & 1) != 0)
    throw input_error(fmt::format(
        "--src-mac {}: a source address must be unicast (the lowest bit of its first byte clear)",
        mac_text(*o.src_mac)));
}

std::uint64_t frames_to_send(const InjectOptions& o) {
  if (o.count) return *o.count;
  return static_cast<std::uint64_t>(std::llround(o.pps * o.duration_s));
}

std::int64_t scheduled_offset_ns(std::uint64_t index, double pps) {
  // long double keeps i * 1e9 / pps exact to well under a ns for any frame count a year allows.
  return static_cast<std::int64_t>(
      std::ceil(static_cast<long double>(index) * 1e9L / static_cast<long double>(pps)));
}

std::uint64_t frames_due(std::int64_t elapsed_ns, double pps, std::uint64_t total) {
  if (elapsed_ns < 0 || total == 0) return 0;
  // The closed form can be off by one where rounding meets a frame's exact time; stepping to
  // the neighbour makes it agree with scheduled_offset_ns, which the send loop sleeps on.
  const long double estimate =
      std::floor(static_cast<long double>(elapsed_ns) * static_cast<long double>(pps) / 1e9L);
  if (estimate >= static_cast<long double>(total)) return total;
  auto due = static_cast<std::uint64_t>(estimate) + 1;
  while (due > 0 && scheduled_offset_ns(due - 1, pps) > elapsed_ns) --due;
  while (due < total && scheduled_offset_ns(due, pps) <= elapsed_ns) ++due;
  return std::min(due, total);
}

std::vector<std::uint8_t> pause_frame(const InjectOptions& o, const MacAddress& src_mac, bool xon) {
  const std::uint16_t quanta = xon ? 0 : o.quanta;
  if (o.pause_8023x) return build_pause(quanta, src_mac);
  std::uint16_t class_enable = 0;
  std::array<std::uint16_t, 8> per_priority{};
  for (const unsigned p : o.priorities) {
    class_enable = static_cast<std::uint16_t>(class_enable | (1u << p));
    per_priority[p] = quanta;
  }
  return build_pfc(class_enable, per_priority, src_mac);
}

InjectResult inject_pause_frames(const InjectOptions& o, const std::atomic<bool>& stop,
                                 const std::function<void(std::uint64_t)>& progress) {
  validate(o);
  // Before the socket, which needs root: a mistyped name gets the right message from anyone.
  const auto ifindex = static_cast<int>(if_nametoindex(o.iface.c_str()));
  if (ifindex == 0) throw no_such_interface(o.iface);
  FileDescriptor socket_fd(::socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0));
  if (socket_fd.get() < 0) {
    const int errnum = errno;
    if (errnum == EPERM || errnum == EACCES)
      throw Error(ExitCode::bad_input,
                  fmt::format("interface '{}': sending raw frames needs root or CAP_NET_RAW (run "
                              "it with sudo)",
                              o.iface),
                  errnum);
    throw system_error("cannot open an AF_PACKET socket", errnum);
  }
  const MacAddress interface_mac = bind_to_interface(socket_fd.get(), o.iface, ifindex);
  const MacAddress src_mac = o.src_mac ? *o.src_mac : interface_mac;

  std::vector<std::uint8_t> frame = pause_frame(o, src_mac, false);
  std::vector<std::uint8_t> xon_frame = pause_frame(o, src_mac, true);
  iovec frame_io{.iov_base = frame.data(), .iov_len = frame.size()};
  // Every message of a batch is the same frame: the kernel copies it once per message.
  std::array<mmsghdr, max_frames_per_sendmmsg> batch{};
  for (auto& m : batch) {
    m.msg_hdr.msg_iov = &frame_io;
    m.msg_hdr.msg_iovlen = 1;
  }

  InjectResult result;
  result.frame_bytes = static_cast<std::uint32_t>(frame.size());
  result.src_mac = src_mac;
  const std::uint64_t total = frames_to_send(o);
  const auto period_ns = static_cast<std::int64_t>(std::ceil(1e9 / o.pps));
  const TimerSlack precise_sleeps(1000);
  const std::int64_t t0 = monotonic_ns();
  std::int64_t last_progress = t0;
  std::uint64_t next = 0;     // the next frame of the schedule; every frame before it went out
  if (progress) progress(0);  // the interface is open: sending starts now

  while (next < total && !stop.load(std::memory_order_relaxed)) {
    const std::int64_t now = monotonic_ns();
    if (progress && now - last_progress >= progress_every_ns) {
      progress(next);
      last_progress = now;
    }
    const std::int64_t elapsed = now - t0;
    const std::uint64_t due = frames_due(elapsed, o.pps, total);
    if (due <= next) {
      sleep_until_monotonic(std::min(t0 + scheduled_offset_ns(next, o.pps), now + max_sleep_ns));
      continue;
    }
    const auto want =
        static_cast<unsigned>(std::min<std::uint64_t>(due - next, max_frames_per_sendmmsg));
    const std::int64_t wall = wall_clock_ns();
    // MSG_DONTWAIT: a blocked send would not see the stop flag (a paused NIC may never drain).
    const int sent = sendmmsg(socket_fd.get(), batch.data(), want, MSG_DONTWAIT);
    if (sent < 0) {
      const int errnum = errno;
      if (errnum == EINTR) continue;
      if (is_full_queue(errnum)) {
        // Nothing of this call was queued: the same frames are retried, none counted twice.
        sleep_until_monotonic(monotonic_ns() + full_queue_pause_ns);
        continue;
      }
      result.send_error = send_failure(o.iface, errnum);
      break;
    }
    if (result.frames_sent == 0 && sent > 0) result.first_ns = wall;
    result.last_ns = wall;
    // Late: due more than a period before this send, i.e. its offset <= elapsed - period - 1.
    const std::uint64_t due_a_period_ago = frames_due(elapsed - period_ns - 1, o.pps, total);
    if (due_a_period_ago > next)
      result.late_frames +=
          std::min<std::uint64_t>(due_a_period_ago - next, static_cast<std::uint64_t>(sent));
    next += static_cast<std::uint64_t>(sent);
    result.frames_sent = next;
  }

  if (o.end_with_xon) {
    // Sent even after a stop request: releasing the pause is the point of asking for it.
    frame_io.iov_base = xon_frame.data();
    frame_io.iov_len = xon_frame.size();
    const std::int64_t give_up = monotonic_ns() + xon_patience_ns;
    while (true) {
      const std::int64_t wall = wall_clock_ns();
      const int sent = sendmmsg(socket_fd.get(), batch.data(), 1, MSG_DONTWAIT);
      if (sent == 1) {
        result.xon_sent = 1;
        if (result.first_ns == 0) result.first_ns = wall;
        result.last_ns = wall;
        break;
      }
      const int errnum = sent < 0 ? errno : EAGAIN;
      if (errnum != EINTR && !is_full_queue(errnum)) {
        if (result.send_error.empty()) result.send_error = send_failure(o.iface, errnum);
        break;
      }
      if (monotonic_ns() >= give_up) {
        if (result.send_error.empty())
          result.send_error = fmt::format(
              "the closing XON could not be queued on '{}' within a second (queue full)", o.iface);
        break;
      }
      sleep_until_monotonic(monotonic_ns() + full_queue_pause_ns);
    }
  }
  if (progress) progress(result.frames_sent);
  return result;
}

}  // namespace rocehil::capture
