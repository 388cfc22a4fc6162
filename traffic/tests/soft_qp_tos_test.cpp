// Each soft QP sends with its own class: the IP TOS byte of its UDP socket, as the kernel hands
// it to a receiver (IP_RECVTOS, ip(7)) — not what the QP says it set. Two QPs of one provider
// with different classes send to a plain UDP socket on 127.0.0.2:4791.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <array>
#include <cstring>
#include <map>

#include "rocehil/traffic/provider.hpp"

namespace rocehil::traffic {
namespace {

class Listener {
 public:
  Listener() {
    fd_ = ::socket(AF_INET, SOCK_DGRAM, 0);
    const int on = 1;
    ::setsockopt(fd_, IPPROTO_IP, IP_RECVTOS, &on, sizeof on);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(4791);
    ::inet_pton(AF_INET, "127.0.0.2", &a.sin_addr);
    bound_ = ::bind(fd_, reinterpret_cast<const sockaddr*>(&a), sizeof a) == 0;
  }
  ~Listener() { ::close(fd_); }
  Listener(const Listener&) = delete;
  Listener& operator=(const Listener&) = delete;
  bool bound() const { return bound_; }

  // The TOS of each datagram that arrives within two seconds, by its UDP source port;
  // `progress` runs between waits (the soft provider sends as its CQ is polled).
  template <class Progress>
  std::map<std::uint16_t, int> tos_by_source_port(std::size_t wanted, Progress progress) {
    std::map<std::uint16_t, int> out;
    std::array<char, 9000> buffer{};
    for (int round = 0; round < 200 && out.size() < wanted; ++round) {
      progress();
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, 10) != 1) continue;
      sockaddr_in from{};
      iovec iov{buffer.data(), buffer.size()};
      alignas(cmsghdr) std::array<char, 64> control{};
      msghdr m{};
      m.msg_name = &from;
      m.msg_namelen = sizeof from;
      m.msg_iov = &iov;
      m.msg_iovlen = 1;
      m.msg_control = control.data();
      m.msg_controllen = control.size();
      if (::recvmsg(fd_, &m, 0) < 0) break;
      for (cmsghdr* c = CMSG_FIRSTHDR(&m); c != nullptr; c = CMSG_NXTHDR(&m, c))
        if (c->cmsg_level == IPPROTO_IP && c->cmsg_type == IP_TOS) {
          unsigned char tos = 0;
          std::memcpy(&tos, CMSG_DATA(c), 1);
          out[ntohs(from.sin_port)] = tos;
        }
    }
    return out;
  }

 private:
  int fd_ = -1;
  bool bound_ = false;
};

TEST(SoftQpTos, EachQpSendsWithItsOwnClass) {
  Listener listener;
  ASSERT_TRUE(listener.bound()) << "127.0.0.2:4791 is taken";
  ProviderOptions o;
  o.address = "127.0.0.1";
  auto provider = make_provider("soft", o);
  auto cq = provider->create_cq(64);
  QpOptions first;
  first.traffic_class = 106;  // DSCP 26, ECT(0)
  QpOptions second;
  second.traffic_class = 98;  // DSCP 24, ECT(0)
  auto a = provider->create_qp(*cq, first);
  auto b = provider->create_qp(*cq, second);
  const MemoryRegion src = provider->register_memory(64);
  for (auto* qp : {a.get(), b.get()}) {
    qp->connect({.address = "127.0.0.2",
                 .gid = {},
                 .qpn = 0x123,
                 .psn = 0,
                 .udp_sport = 0,
                 .mtu = 1024,
                 .max_reads = 0});
    const SendRequest wr{.wr_id = 1,
                         .opcode = Opcode::write,
                         .local = &src,
                         .length = 64,
                         .remote_address = 0,
                         .rkey = 1};
    ASSERT_EQ(qp->post_send({&wr, 1}), PostResult::ok);
  }
  std::array<Completion, 8> batch{};
  const auto tos = listener.tos_by_source_port(2, [&] { cq->poll(batch); });
  const std::uint16_t port_a = a->local_endpoint().udp_sport;
  const std::uint16_t port_b = b->local_endpoint().udp_sport;
  ASSERT_NE(port_a, port_b);
  ASSERT_TRUE(tos.contains(port_a)) << "nothing arrived from QP a's port " << port_a;
  ASSERT_TRUE(tos.contains(port_b)) << "nothing arrived from QP b's port " << port_b;
  EXPECT_EQ(tos.at(port_a), 106);
  EXPECT_EQ(tos.at(port_b), 98);
}

}  // namespace
}  // namespace rocehil::traffic
