// Soft providers of one host share UDP 4791 as processes share a NIC: providers on 127.0.0.1
// with a peer on 127.0.0.2 talking to them. Whichever provider reads a datagram (the one socket
// of a process, or the kernel's choice among processes) may not be the one whose QP it is for,
// and passes it on; every transfer still completes and arrives intact.
#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstring>
#include <fstream>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "rocehil/traffic/provider.hpp"
#include "soft/shared_port.hpp"
#include "soft/soft_provider.hpp"

namespace rocehil::traffic {
namespace shared_port_test {

struct Host {
  explicit Host(const std::string& address) {
    ProviderOptions o;
    o.address = address;
    provider = make_provider("soft", o);
    cq = provider->create_cq(4096);
  }
  soft::SoftProvider& soft() { return dynamic_cast<soft::SoftProvider&>(*provider); }
  std::unique_ptr<Provider> provider;
  std::unique_ptr<CompletionQueue> cq;
};

// Flows and WRITEs between `from` and `to`, each QP of one with its own source port.
struct Pair {
  std::unique_ptr<QueuePair> sender, receiver;
  MemoryRegion source, target;
};

constexpr std::uint32_t message_bytes = 64 * 1024;
constexpr int qps_per_pair = 16;

std::vector<Pair> connect(Host& from, Host& to, unsigned seed) {
  std::vector<Pair> pairs;
  std::mt19937 random(seed);
  for (int i = 0; i < qps_per_pair; ++i) {
    Pair p;
    p.sender = from.provider->create_qp(*from.cq, {});
    p.receiver = to.provider->create_qp(*to.cq, {});
    p.sender->connect(p.receiver->local_endpoint());
    p.receiver->connect(p.sender->local_endpoint());
    p.source = from.provider->register_memory(message_bytes);
    p.target = to.provider->register_memory(message_bytes);
    for (std::uint32_t b = 0; b < message_bytes; ++b)
      p.source.data[b] = static_cast<std::byte>(random());
    pairs.push_back(std::move(p));
  }
  return pairs;
}

void post_all(std::vector<Pair>& pairs) {
  for (auto& p : pairs) {
    const SendRequest wr{.wr_id = 1,
                         .opcode = Opcode::write,
                         .local = &p.source,
                         .length = message_bytes,
                         .remote_address = p.target.remote_address,
                         .rkey = p.target.rkey};
    ASSERT_EQ(p.sender->post_send({&wr, 1}), PostResult::ok);
  }
}

// Polls every host (each is its own NIC: polling drives it) until `wanted` successful
// completions arrived on `senders`, or ten seconds passed.
std::size_t run_until(std::vector<Host*> hosts, std::vector<Host*> senders, std::size_t wanted) {
  std::size_t done = 0;
  std::array<Completion, 64> batch{};
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (done < wanted && std::chrono::steady_clock::now() < deadline) {
    for (Host* h : hosts) {
      const std::size_t n = h->cq->poll(batch);
      const bool sender = std::find(senders.begin(), senders.end(), h) != senders.end();
      for (std::size_t i = 0; i < n; ++i)
        if (sender && batch[i].status == WcStatus::success) ++done;
    }
  }
  return done;
}

// Packets the pairs' senders sent more than once.
std::uint64_t resent_by(const std::vector<Pair>& pairs) {
  std::uint64_t resent = 0;
  for (const auto& p : pairs) resent += p.sender->counters().retransmitted_packets;
  return resent;
}

bool arrived_intact(const std::vector<Pair>& pairs) {
  for (const auto& p : pairs)
    if (std::memcmp(p.source.data, p.target.data, message_bytes) != 0) return false;
  return true;
}

TEST(SoftSharedPort, TwoProvidersOnOneAddressBothReceiveEveryFlowOfTheirs) {
  Host a("127.0.0.1"), b("127.0.0.1"), peer("127.0.0.2");
  auto into_a = connect(peer, a, 1), into_b = connect(peer, b, 2);
  auto out_of_a = connect(a, peer, 3), out_of_b = connect(b, peer, 4);
  // Each provider's QPNs carry its own id in their top byte.
  EXPECT_NE(into_a[0].receiver->local_endpoint().qpn >> 16,
            into_b[0].receiver->local_endpoint().qpn >> 16);
  post_all(into_a);
  post_all(into_b);
  post_all(out_of_a);
  post_all(out_of_b);
  EXPECT_EQ(run_until({&a, &b, &peer}, {&a, &b, &peer}, 4 * qps_per_pair), 4u * qps_per_pair);
  EXPECT_TRUE(arrived_intact(into_a));
  EXPECT_TRUE(arrived_intact(into_b));
  EXPECT_TRUE(arrived_intact(out_of_a));
  EXPECT_TRUE(arrived_intact(out_of_b));
  // Both read the one socket of their address, and each passes on what was the other's.
  EXPECT_GT(a.soft().passed_on() + b.soft().passed_on(), 0u);
  // Alone on its address, the peer receives every datagram itself.
  EXPECT_EQ(peer.soft().passed_on(), 0u);
  EXPECT_EQ(a.soft().dropped_datagrams() + b.soft().dropped_datagrams(), 0u);
}

// Two collectives on one host choose their QPs' source ports alike: on a NIC a source port is a
// header field, so both QPs are made and both send.
TEST(SoftSharedPort, QpsOfTwoProvidersMayChooseOneSourcePort) {
  Host a("127.0.0.1"), b("127.0.0.1"), peer("127.0.0.2");
  QpOptions chosen;
  chosen.udp_sport = 65001;
  std::vector<Pair> pairs;
  for (Host* h : {&a, &b}) {
    Pair p;
    p.sender = h->provider->create_qp(*h->cq, chosen);
    p.receiver = peer.provider->create_qp(*peer.cq, {});
    p.sender->connect(p.receiver->local_endpoint());
    p.receiver->connect(p.sender->local_endpoint());
    p.source = h->provider->register_memory(message_bytes);
    p.target = peer.provider->register_memory(message_bytes);
    std::memset(p.source.data, h == &a ? 0xa5 : 0x5a, message_bytes);
    pairs.push_back(std::move(p));
  }
  EXPECT_EQ(pairs[0].sender->local_endpoint().udp_sport, 65001);
  EXPECT_EQ(pairs[1].sender->local_endpoint().udp_sport, 65001);
  post_all(pairs);
  EXPECT_EQ(run_until({&a, &b, &peer}, {&a, &b}, 2), 2u);
  EXPECT_TRUE(arrived_intact(pairs));
}

// Providers of one process share one socket: one that does not poll (its part ended, or has not
// begun) holds back nothing of the others. Here b never polls while the peer writes into a and
// b; a's writes complete, and b's when b polls at last.
TEST(SoftSharedPort, AProviderThatDoesNotPollHoldsNothingBack) {
  Host a("127.0.0.1"), b("127.0.0.1"), peer("127.0.0.2");
  auto into_a = connect(peer, a, 7), into_b = connect(peer, b, 8);
  post_all(into_a);
  post_all(into_b);
  std::size_t done = 0;
  std::array<Completion, 64> batch{};
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  std::size_t into_a_done = 0;
  while (into_a_done < qps_per_pair && std::chrono::steady_clock::now() < deadline) {
    a.cq->poll(batch);
    const std::size_t n = peer.cq->poll(batch);
    for (std::size_t i = 0; i < n; ++i)
      for (const auto& p : into_a)
        if (batch[i].qpn == p.sender->qpn() && batch[i].status == WcStatus::success) ++into_a_done;
  }
  EXPECT_EQ(into_a_done, std::size_t{qps_per_pair});
  EXPECT_TRUE(arrived_intact(into_a));
  done = run_until({&b, &peer}, {&peer}, qps_per_pair);
  EXPECT_EQ(done, std::size_t{qps_per_pair});
  EXPECT_TRUE(arrived_intact(into_b));
  EXPECT_GT(a.soft().passed_on(), 0u);
}

// Bytes waiting in each socket bound to 127.0.0.1:4791, as /proc/net/udp's rx_queue says.
std::vector<unsigned long> queued_on_127_0_0_1_4791() {
  std::ifstream table("/proc/net/udp");
  std::string line;
  std::vector<unsigned long> out;
  while (std::getline(table, line)) {
    std::istringstream fields(line);
    std::string slot, local, remote, state, queues;
    fields >> slot >> local >> remote >> state >> queues;
    if (local == "0100007F:12B7")
      out.push_back(std::stoul(queues.substr(queues.find(':') + 1), nullptr, 16));
  }
  return out;
}

// A provider of another process on the address, which the kernel shares the port with: when it
// ends, what it held for the others is passed on, so nothing is lost and nothing sent twice.
TEST(SoftSharedPort, AProviderOfAnotherProcessThatEndsLosesNothingOfTheOthers) {
  int ready[2], end[2];
  ASSERT_EQ(::pipe(ready), 0);
  ASSERT_EQ(::pipe(end), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    char c = 0;
    {
      Host b("127.0.0.1");
      (void)!::write(ready[1], &c, 1);
      (void)!::read(end[0], &c, 1);
    }
    ::_exit(0);
  }
  char c = 0;
  ASSERT_EQ(::read(ready[0], &c, 1), 1);
  Host a("127.0.0.1"), peer("127.0.0.2");
  auto into_a = connect(peer, a, 5);
  post_all(into_a);
  // Only the peer runs: its packets wait in the two sockets the kernel chose for them.
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(20);
  std::array<Completion, 64> batch{};
  while (std::chrono::steady_clock::now() < until) peer.cq->poll(batch);
  const std::vector<unsigned long> queued = queued_on_127_0_0_1_4791();
  ASSERT_EQ(write(end[1], &c, 1), 1);
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  ASSERT_EQ(queued.size(), 2u);
  EXPECT_GT(queued[0], 0u);
  EXPECT_GT(queued[1], 0u) << "every flow landed on one socket: nothing to pass on";
  EXPECT_EQ(run_until({&a, &peer}, {&peer}, qps_per_pair), std::size_t{qps_per_pair});
  EXPECT_TRUE(arrived_intact(into_a));
  EXPECT_EQ(resent_by(into_a), 0u);
  for (int fd : {ready[0], ready[1], end[0], end[1]}) ::close(fd);
}

// A provider of another process whose part has ended (or not begun) is served by its agent
// (serve_idle, every idle_period): what the kernel gave it of the others' flows is passed on,
// and their transfers complete with nothing sent twice.
TEST(SoftSharedPort, AnIdleProviderOfAnotherProcessServedByItsAgentHoldsNothingBack) {
  int ready[2], end[2];
  ASSERT_EQ(::pipe(ready), 0);
  ASSERT_EQ(::pipe2(end, O_NONBLOCK), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    char c = 0;
    {
      Host b("127.0.0.1");
      (void)!::write(ready[1], &c, 1);
      while (::read(end[0], &c, 1) != 1) {
        b.provider->serve_idle();
        std::this_thread::sleep_for(b.provider->idle_period());
      }
    }
    ::_exit(0);
  }
  char c = 0;
  ASSERT_EQ(::read(ready[0], &c, 1), 1);
  Host a("127.0.0.1"), peer("127.0.0.2");
  auto into_a = connect(peer, a, 9);
  post_all(into_a);
  const std::size_t done = run_until({&a, &peer}, {&peer}, qps_per_pair);
  ASSERT_EQ(write(end[1], &c, 1), 1);
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  EXPECT_EQ(done, std::size_t{qps_per_pair});
  EXPECT_TRUE(arrived_intact(into_a));
  EXPECT_EQ(resent_by(into_a), 0u);
  for (int fd : {ready[0], ready[1], end[0], end[1]}) ::close(fd);
}

TEST(SoftSharedPort, ADatagramNotPassedOnByAProviderIsDropped) {
  Host a("127.0.0.1");
  auto qp = a.provider->create_qp(*a.cq, {});
  const auto id = static_cast<std::uint8_t>(qp->local_endpoint().qpn >> 16);
  // A datagram shaped as a passed-on one, but sent from an ordinary socket.
  const int fd = ::socket(AF_INET, SOCK_DGRAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(soft::SharedPort::forward_port);
  to.sin_addr.s_addr = soft::SharedPort::address_of(id);
  std::array<std::uint8_t, sizeof(sockaddr_storage) + 1 + 64> forged{};
  reinterpret_cast<sockaddr_storage*>(forged.data())->ss_family = AF_INET;
  ASSERT_EQ(
      ::sendto(fd, forged.data(), forged.size(), 0, reinterpret_cast<sockaddr*>(&to), sizeof to),
      static_cast<ssize_t>(forged.size()));
  ::close(fd);
  std::array<Completion, 4> batch{};
  for (int i = 0; i < 100 && a.soft().dropped_datagrams() == 0; ++i) {
    a.cq->poll(batch);
    ::usleep(1000);
  }
  EXPECT_EQ(a.soft().dropped_datagrams(), 1u);
  EXPECT_EQ(a.soft().passed_on(), 0u);
}

// Two providers of one process polled from two threads at once, as an agent runs two parts:
// both read the one socket, and each hands the other's datagrams over in-process before its own
// next read (sibling_inbox.hpp), so no receiver sees a flow out of order. (Passed over loopback,
// one the other read could arrive after the next one a provider read itself: out of sequence,
// a NAK and a resent window with nothing lost.) The peer's writes, 2 MB, fit the socket's 8 MB:
// nothing is lost on the way either.
TEST(SoftSharedPort, ProvidersOfOneProcessPolledAtOnceKeepEachFlowInOrder) {
  Host a("127.0.0.1"), b("127.0.0.1"), peer("127.0.0.2");
  for (int round = 0; round < 5; ++round) {
    auto into_a = connect(peer, a, 20 + round), into_b = connect(peer, b, 40 + round);
    std::atomic<bool> stop{false};
    const auto poll = [&stop](Host& h) {
      std::array<Completion, 64> batch{};
      while (!stop.load()) h.cq->poll(batch);
    };
    std::thread polling_a(poll, std::ref(a)), polling_b(poll, std::ref(b));
    post_all(into_a);
    post_all(into_b);
    const std::size_t done = run_until({&peer}, {&peer}, 2 * qps_per_pair);
    stop = true;
    polling_a.join();
    polling_b.join();
    ASSERT_EQ(done, 2u * qps_per_pair);
    EXPECT_TRUE(arrived_intact(into_a));
    EXPECT_TRUE(arrived_intact(into_b));
    std::uint64_t out_of_sequence = 0;
    for (const auto* pairs : {&into_a, &into_b})
      for (const auto& p : *pairs) out_of_sequence += p.receiver->counters().out_of_sequence;
    EXPECT_EQ(out_of_sequence, 0u) << "round " << round;
    EXPECT_EQ(resent_by(into_a) + resent_by(into_b), 0u) << "round " << round;
  }
  EXPECT_GT(a.soft().passed_on() + b.soft().passed_on(), 0u);
}

}  // namespace shared_port_test
}  // namespace rocehil::traffic
