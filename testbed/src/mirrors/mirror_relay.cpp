#include "rocehil/testbed/mirror_relay.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>

#include "rocehil/common/error.hpp"
#include "rocehil/testbed/mirror_encap.hpp"
#include "rocehil/testbed/mirror_ports.hpp"

namespace rocehil::testbed {

namespace {

constexpr int batch_size = 64;
// A burst of mirrored traffic waits here while the relay is busy sending: a few ms at line rate.
constexpr int receive_buffer_bytes = 8 << 20;
constexpr int send_buffer_bytes = 4 << 20;
// Batches read back to back before the counters get their turn again.
constexpr int batches_per_turn = 64;
constexpr auto poll_interval = std::chrono::milliseconds(250);
constexpr auto counters_interval = std::chrono::seconds(1);

class Descriptor {
 public:
  explicit Descriptor(int fd = -1) : fd_(fd) {}
  ~Descriptor() {
    if (fd_ >= 0) ::close(fd_);
  }
  Descriptor(const Descriptor&) = delete;
  Descriptor& operator=(const Descriptor&) = delete;
  int get() const { return fd_; }
  void reset(int fd) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = fd;
  }

 private:
  int fd_;
};

Error relay_error(std::string what, int errnum) {
  return system_error("mirror relay: " + std::move(what), errnum);
}

void enter_netns(const std::string& netns) {
  const std::string path = "/run/netns/" + netns;
  const Descriptor fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0)
    throw relay_error(fmt::format("cannot open {} (is the testbed up? see 'ip netns list')", path),
                      errno);
  if (::setns(fd.get(), CLONE_NEWNET) != 0)
    throw relay_error(fmt::format("cannot enter network namespace {}", netns), errno);
}

void set_option(int fd, int level, int name, int value, std::string_view what) {
  if (::setsockopt(fd, level, name, &value, sizeof value) != 0)
    throw relay_error(fmt::format("setting {}", what), errno);
}

sockaddr_in ipv4_address(const std::string& text, std::string_view option) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  if (::inet_pton(AF_INET, text.c_str(), &a.sin_addr) != 1)
    throw input_error(fmt::format("{} '{}' is not an IPv4 address", option, text));
  return a;
}

ifreq interface_request(const std::string& name) {
  ifreq r{};
  if (name.empty() || name.size() >= IFNAMSIZ)
    throw input_error(
        fmt::format("interface name '{}' is not 1 to {} characters", name, IFNAMSIZ - 1));
  std::memcpy(r.ifr_name, name.data(), name.size());
  return r;
}

MirroredPortAddress port_address(int fd, const std::string& name) {
  ifreq r = interface_request(name);
  if (::ioctl(fd, SIOCGIFINDEX, &r) != 0)
    throw relay_error(fmt::format("no port {} in this namespace", name), errno);
  MirroredPortAddress out;
  out.ifindex = r.ifr_ifindex;
  if (::ioctl(fd, SIOCGIFHWADDR, &r) != 0)
    throw relay_error(fmt::format("reading the address of port {}", name), errno);
  std::memcpy(out.mac.data(), r.ifr_hwaddr.sa_data, out.mac.size());
  return out;
}

timespec realtime_now() {
  timespec now{};
  ::clock_gettime(CLOCK_REALTIME, &now);
  return now;
}

// Room for the one control message the packet socket adds: the receive time.
union Control {
  cmsghdr align;
  char bytes[CMSG_SPACE(sizeof(timespec))];
};

}  // namespace

struct MirrorRelay::Impl {
  RelayOptions o;
  Descriptor packet;
  Descriptor raw;
  int mtu = 0;
  std::size_t kept = 0;
  MirroredPorts ports{std::vector<MirroredPortAddress>{}};
  RelayCounters counters;
  // One slot per frame of a batch, all made once: the frame as read (its first `kept` bytes),
  // where it came from, its receive time, its headers, and the two parts of its packet.
  std::vector<std::uint8_t> frames;
  std::vector<sockaddr_ll> from;
  std::vector<Control> controls;
  std::vector<std::array<std::uint8_t, max_encap_header_bytes>> headers;
  std::vector<iovec> rx_iov;
  std::vector<iovec> tx_iov;
  std::vector<mmsghdr> rx;
  std::vector<mmsghdr> tx;

  void open_sockets();
  void make_buffers();
  int receive();
  int wrap(int received);
  void send(int count);
  void write_counters();
};

void MirrorRelay::Impl::open_sockets() {
  // Protocol 0 until bound: a socket of ETH_P_ALL would take every interface's frames meanwhile.
  packet.reset(::socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0));
  if (packet.get() < 0) throw relay_error("cannot open a packet socket (root?)", errno);
  const int ifindex = static_cast<int>(::if_nametoindex(o.interface.c_str()));
  if (ifindex == 0)
    throw relay_error(fmt::format("no interface {} in {}", o.interface, o.netns), errno);
  std::vector<MirroredPortAddress> addresses;
  for (const auto& p : o.ports) addresses.push_back(port_address(packet.get(), p));
  ports = MirroredPorts(std::move(addresses));
  // What the spine itself sends out of the relay's end is no copy.
  set_option(packet.get(), SOL_PACKET, PACKET_IGNORE_OUTGOING, 1, "PACKET_IGNORE_OUTGOING");
  // The switch's clock: when the kernel took the copy, not when the relay got to it.
  set_option(packet.get(), SOL_SOCKET, SO_TIMESTAMPNS, 1, "SO_TIMESTAMPNS");
  set_option(packet.get(), SOL_SOCKET, SO_RCVBUFFORCE, receive_buffer_bytes, "SO_RCVBUFFORCE");
  sockaddr_ll at{};
  at.sll_family = AF_PACKET;
  at.sll_protocol = htons(ETH_P_ALL);
  at.sll_ifindex = ifindex;
  if (::bind(packet.get(), reinterpret_cast<const sockaddr*>(&at), sizeof at) != 0)
    throw relay_error(fmt::format("cannot bind a packet socket to {}", o.interface), errno);

  raw.reset(::socket(AF_INET, SOCK_RAW | SOCK_CLOEXEC, IPPROTO_GRE));
  if (raw.get() < 0) throw relay_error("cannot open a raw IPv4 socket of protocol 47", errno);
  set_option(raw.get(), SOL_SOCKET, SO_SNDBUFFORCE, send_buffer_bytes, "SO_SNDBUFFORCE");
  const sockaddr_in source = ipv4_address(o.source, "--source");
  if (::bind(raw.get(), reinterpret_cast<const sockaddr*>(&source), sizeof source) != 0)
    throw relay_error(fmt::format("cannot send from {} in {}", o.source, o.netns), errno);
  const sockaddr_in destination = ipv4_address(o.destination, "--destination");
  if (::connect(raw.get(), reinterpret_cast<const sockaddr*>(&destination), sizeof destination) !=
      0)
    throw relay_error(fmt::format("no route from {} to {}", o.netns, o.destination), errno);
  socklen_t length = sizeof mtu;
  if (::getsockopt(raw.get(), IPPROTO_IP, IP_MTU, &mtu, &length) != 0)
    throw relay_error(fmt::format("reading the MTU of the route to {}", o.destination), errno);
}

void MirrorRelay::Impl::make_buffers() {
  kept = frame_bytes_kept(o.mode, mtu, o.truncate);
  if (kept < static_cast<std::size_t>(min_mirror_truncate))
    throw Error(ExitCode::infrastructure,
                fmt::format("mirror relay: the route to {} has MTU {}, too small for an Ethernet "
                            "header after the {} headers",
                            o.destination, mtu, to_string(o.mode)));
  counters.frame_bytes_kept = kept;
  const auto n = static_cast<std::size_t>(batch_size);
  frames.assign(n * kept, 0);
  from.assign(n, {});
  controls.assign(n, {});
  headers.assign(n, {});
  rx_iov.assign(n, {});
  tx_iov.assign(2 * n, {});
  rx.assign(n, {});
  tx.assign(n, {});
  for (std::size_t i = 0; i < n; ++i) rx_iov[i] = {frames.data() + i * kept, kept};
}

int MirrorRelay::Impl::receive() {
  for (std::size_t i = 0; i < rx.size(); ++i) {
    msghdr& m = rx[i].msg_hdr;
    m = {};
    m.msg_name = &from[i];
    m.msg_namelen = sizeof from[i];
    m.msg_iov = &rx_iov[i];
    m.msg_iovlen = 1;
    m.msg_control = controls[i].bytes;
    m.msg_controllen = sizeof controls[i].bytes;
  }
  // MSG_TRUNC: each length is the frame's as mirrored, though only `kept` bytes are copied.
  const int n = ::recvmmsg(packet.get(), rx.data(), batch_size, MSG_DONTWAIT | MSG_TRUNC, nullptr);
  if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
    counters.last_errno = errno;
  return std::max(n, 0);
}

int MirrorRelay::Impl::wrap(int received) {
  int out = 0;
  for (int i = 0; i < received; ++i) {
    const auto slot = static_cast<std::size_t>(i);
    if (from[slot].sll_pkttype == PACKET_OUTGOING) continue;
    msghdr& m = rx[slot].msg_hdr;
    const std::size_t length = rx[slot].msg_len;
    const std::size_t copied = std::min(length, kept);
    const std::span<const std::uint8_t> frame(frames.data() + slot * kept, copied);
    MirroredFrame f;
    f.sequence = counters.next_sequence++;
    f.truncated = copied < length;
    const PortMatch port = ports.match(frame);
    f.port_index = static_cast<std::uint32_t>(port.ifindex);
    f.egress = port.egress;
    f.cos = frame_cos(frame);
    timespec at{};
    bool stamped = false;
    for (cmsghdr* c = CMSG_FIRSTHDR(&m); c != nullptr; c = CMSG_NXTHDR(&m, c)) {
      if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_TIMESTAMPNS) continue;
      std::memcpy(&at, CMSG_DATA(c), sizeof at);
      stamped = true;
    }
    if (!stamped) at = realtime_now();
    f.seconds = static_cast<std::uint32_t>(at.tv_sec);
    f.nanoseconds = static_cast<std::uint32_t>(at.tv_nsec);
    const std::size_t header = write_encap_header(o.mode, o.session, f, headers[slot]);

    const auto k = static_cast<std::size_t>(out);
    tx_iov[2 * k] = {headers[slot].data(), header};
    tx_iov[2 * k + 1] = {const_cast<std::uint8_t*>(frame.data()), copied};
    tx[k].msg_hdr = {};
    tx[k].msg_hdr.msg_iov = &tx_iov[2 * k];
    tx[k].msg_hdr.msg_iovlen = 2;
    counters.bytes += length;
    counters.truncated += f.truncated ? 1 : 0;
    counters.unknown_port += port.ifindex == 0 ? 1 : 0;
    ++out;
  }
  return out;
}

void MirrorRelay::Impl::send(int count) {
  int done = 0;
  while (done < count) {
    const int n = ::sendmmsg(raw.get(), tx.data() + done, static_cast<unsigned>(count - done), 0);
    if (n > 0) {
      done += n;
      counters.frames += static_cast<std::uint64_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    // The copy is lost, as a switch loses one: its sequence number leaves the collector a gap.
    counters.last_errno = n < 0 ? errno : 0;
    ++counters.send_errors;
    ++done;
  }
}

void MirrorRelay::Impl::write_counters() {
  tpacket_stats stats{};
  socklen_t length = sizeof stats;
  // The kernel's count restarts at every read.
  if (::getsockopt(packet.get(), SOL_PACKET, PACKET_STATISTICS, &stats, &length) == 0)
    counters.dropped += stats.tp_drops;
  const timespec now = realtime_now();
  counters.written_at_ns = static_cast<std::int64_t>(now.tv_sec) * 1'000'000'000 + now.tv_nsec;
  if (!o.counters_file.empty()) write_relay_counters(o.counters_file, counters);
}

MirrorRelay::MirrorRelay(RelayOptions options) : impl_(std::make_unique<Impl>()) {
  impl_->o = std::move(options);
  const RelayOptions& o = impl_->o;
  if (o.mode == MirrorMode::local)
    throw input_error("--mode local: a local mirror needs no relay; give erspan, erspan2 or gre");
  if (o.session < 0 || o.session > max_mirror_session)
    throw input_error(fmt::format("--session {}: give 0 to {} (ERSPAN's session ID is 10 bits)",
                                  o.session, max_mirror_session));
  enter_netns(o.netns);
  impl_->open_sockets();
  impl_->make_buffers();
}

MirrorRelay::~MirrorRelay() = default;

int MirrorRelay::mtu() const {
  return impl_->mtu;
}

RelayCounters MirrorRelay::run(const std::atomic<bool>& stop) {
  Impl& r = *impl_;
  r.write_counters();
  auto next_write = std::chrono::steady_clock::now() + counters_interval;
  while (!stop.load()) {
    pollfd p{r.packet.get(), POLLIN, 0};
    const int ready = ::poll(&p, 1, static_cast<int>(poll_interval.count()));
    if (ready < 0 && errno != EINTR) r.counters.last_errno = errno;
    for (int turn = 0; ready > 0 && turn < batches_per_turn && !stop.load(); ++turn) {
      const int received = r.receive();
      r.send(r.wrap(received));
      if (received < batch_size) break;
    }
    if (std::chrono::steady_clock::now() >= next_write) {
      r.write_counters();
      next_write = std::chrono::steady_clock::now() + counters_interval;
    }
  }
  r.write_counters();
  return r.counters;
}

}  // namespace rocehil::testbed
