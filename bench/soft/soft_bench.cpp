// Benchmark of the soft provider over loopback against a plain UDP sender in the same run.
//
// Reference: one thread sends datagrams of the same size as the soft provider's WRITE packets
// with sendmmsg (batches of 64) to a socket that another thread drains with recvmmsg — the
// fastest a user-space UDP stack can move these packets here. Soft: one provider per thread on
// two loopback addresses, an RC WRITE stream of MTU-sized packets, the responder polling its
// CQ (placing data, ICRC checks, ACKs) in its own thread. Both run for --seconds each, in turn,
// interleaved --rounds times; the best round of each is reported with their packet-rate ratio.
// Figures are printed, never asserted.
#include <arpa/inet.h>
#include <fmt/format.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <array>
#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "rocehil/traffic/provider.hpp"

using namespace rocehil::traffic;
using Clock = std::chrono::steady_clock;

namespace {

struct Rate {
  double packets_per_s = 0;  // soft: packets of completed WRITEs; reference: packets received
  double gbps = 0;           // payload bits
  double sent_per_s = 0;     // reference: packets sendmmsg accepted
};

int udp_socket(const char* address, std::uint16_t port, sockaddr_in& bound) {
  const int fd = ::socket(AF_INET, SOCK_DGRAM, 0);
  const int buffer = 8 << 20;
  ::setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &buffer, sizeof buffer);
  ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &buffer, sizeof buffer);
  bound = {};
  bound.sin_family = AF_INET;
  bound.sin_port = htons(port);
  ::inet_pton(AF_INET, address, &bound.sin_addr);
  ::bind(fd, reinterpret_cast<sockaddr*>(&bound), sizeof bound);
  socklen_t length = sizeof bound;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &length);
  return fd;
}

// The reference: sendmmsg in batches, a receiver thread draining with recvmmsg. The rate is what
// the receiver got, as the soft provider's rate is what its responder placed.
Rate reference(std::size_t datagram_bytes, double seconds) {
  sockaddr_in sink_address{}, source_address{};
  const int sink = udp_socket("127.0.0.2", 0, sink_address);
  const int source = udp_socket("127.0.0.1", 0, source_address);
  timeval tick{0, 100'000};
  ::setsockopt(sink, SOL_SOCKET, SO_RCVTIMEO, &tick, sizeof tick);
  std::atomic<bool> stop{false};
  std::uint64_t received = 0;
  std::thread receiver([&] {
    constexpr std::size_t batch = 64;
    std::vector<std::uint8_t> buffers(batch * 9216);
    std::array<iovec, batch> iov{};
    std::array<mmsghdr, batch> messages{};
    for (std::size_t i = 0; i < batch; ++i) {
      iov[i] = {buffers.data() + i * 9216, 9216};
      messages[i].msg_hdr.msg_iov = &iov[i];
      messages[i].msg_hdr.msg_iovlen = 1;
    }
    while (!stop.load(std::memory_order_relaxed)) {
      const int n = ::recvmmsg(sink, messages.data(), batch, 0, nullptr);
      if (n > 0) received += static_cast<std::uint64_t>(n);
    }
  });
  constexpr std::size_t batch = 64;
  std::vector<std::uint8_t> payload(datagram_bytes, 0x5a);
  std::array<iovec, batch> iov{};
  std::array<mmsghdr, batch> messages{};
  for (std::size_t i = 0; i < batch; ++i) {
    iov[i] = {payload.data(), payload.size()};
    messages[i].msg_hdr.msg_iov = &iov[i];
    messages[i].msg_hdr.msg_iovlen = 1;
    messages[i].msg_hdr.msg_name = &sink_address;
    messages[i].msg_hdr.msg_namelen = sizeof sink_address;
  }
  const auto start = Clock::now();
  const std::uint64_t received_before = received;
  std::uint64_t sent = 0;
  while (std::chrono::duration<double>(Clock::now() - start).count() < seconds) {
    const int n = ::sendmmsg(source, messages.data(), batch, 0);
    if (n > 0) sent += static_cast<std::uint64_t>(n);
  }
  const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
  const std::uint64_t got = received - received_before;
  stop = true;
  receiver.join();
  ::close(sink);
  ::close(source);
  const double pps = static_cast<double>(got) / elapsed;
  return {pps, pps * static_cast<double>(datagram_bytes) * 8 / 1e9,
          static_cast<double>(sent) / elapsed};
}

// The soft provider: a stream of `message_bytes` WRITEs, `depth` outstanding, for `seconds`.
Rate soft(std::uint32_t mtu, std::uint32_t message_bytes, double seconds, std::size_t& datagram) {
  ProviderOptions a_options, b_options;
  a_options.address = "127.0.0.1";
  b_options.address = "127.0.0.2";
  auto a = make_provider("soft", a_options);
  auto b = make_provider("soft", b_options);
  auto cq_a = a->create_cq(4096), cq_b = b->create_cq(4096);
  QpOptions o;
  o.mtu = mtu;
  o.max_send_wr = 256;
  auto qa = a->create_qp(*cq_a, o);
  auto qb = b->create_qp(*cq_b, o);
  qa->connect(qb->local_endpoint());
  qb->connect(qa->local_endpoint());
  const MemoryRegion src = a->register_memory(message_bytes);
  const MemoryRegion dst = b->register_memory(message_bytes);
  std::atomic<bool> stop{false};
  std::thread responder([&] {
    std::array<Completion, 64> wc{};
    while (!stop.load(std::memory_order_relaxed)) cq_b->poll(wc);
  });
  const SendRequest wr{.wr_id = 0,
                       .opcode = Opcode::write,
                       .local = &src,
                       .length = message_bytes,
                       .remote_address = dst.remote_address,
                       .rkey = dst.rkey};
  std::array<Completion, 64> wc{};
  std::uint64_t completed = 0;
  std::uint32_t outstanding = 0;
  const auto start = Clock::now();
  while (std::chrono::duration<double>(Clock::now() - start).count() < seconds) {
    while (outstanding < 64 && qa->post_send({&wr, 1}) == PostResult::ok) ++outstanding;
    const std::size_t n = cq_a->poll(wc);
    outstanding -= static_cast<std::uint32_t>(n);
    completed += n;
  }
  const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
  stop = true;
  responder.join();
  const QpCounters c = qb->counters();
  datagram = c.packets_received ? c.bytes_received / c.packets_received : 0;
  // Only packets of completed messages count: the placed payload is what the workload got.
  const double packets = static_cast<double>(completed) * ((message_bytes + mtu - 1) / mtu);
  const double pps = packets / elapsed;
  return {pps, static_cast<double>(completed) * message_bytes * 8 / elapsed / 1e9, pps};
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app("soft provider vs a plain sendmmsg/recvmmsg UDP pair, over loopback");
  std::uint32_t mtu = 1024, message = 65536;
  double seconds = 2;
  int rounds = 3;
  app.add_option("--mtu", mtu, "RoCE MTU of the soft QPs")->capture_default_str();
  app.add_option("--message-bytes", message, "WRITE size")->capture_default_str();
  app.add_option("--seconds", seconds, "Duration of each run")->capture_default_str();
  app.add_option("--rounds", rounds, "Interleaved rounds; the best of each is reported")
      ->capture_default_str();
  CLI11_PARSE(app, argc, argv);

  Rate best_soft, best_reference;
  std::size_t datagram = mtu + 12 + 4;  // first guess, replaced by the measured size
  for (int r = 0; r < rounds; ++r) {
    const Rate s = soft(mtu, message, seconds, datagram);
    const Rate ref = reference(datagram, seconds);
    fmt::print(
        "round {}: soft {:.3f} Mpps {:.2f} Gb/s payload | sendmmsg sent {:.3f} Mpps, recvmmsg got "
        "{:.3f} Mpps ({} B)\n",
        r + 1, s.packets_per_s / 1e6, s.gbps, ref.sent_per_s / 1e6, ref.packets_per_s / 1e6,
        datagram);
    if (s.packets_per_s > best_soft.packets_per_s) best_soft = s;
    if (ref.sent_per_s > best_reference.sent_per_s) best_reference = ref;
  }
  // The ratio is against what the plain sender pushed into the kernel, the stricter reference:
  // its receiver may fall behind and drop, the soft provider's responder may not.
  fmt::print(
      "best: soft provider {:.3f} Mpps ({:.2f} Gb/s of WRITE payload, MTU {}, {} B messages); "
      "plain sendmmsg {:.3f} Mpps of {} B datagrams (its receiver got {:.3f}); ratio {:.2f}\n",
      best_soft.packets_per_s / 1e6, best_soft.gbps, mtu, message, best_reference.sent_per_s / 1e6,
      datagram, best_reference.packets_per_s / 1e6,
      best_soft.packets_per_s / best_reference.sent_per_s);
}
