// One agent serving several sessions over one connection, as an agent that dialed home does for
// every case of a run: each session is its own state machine, replies name their session, an
// ended session releases what it held while the others go on, and the number open at once is
// bounded. Over a real pipe pair with the agent's own loop in a thread.
#include <fcntl.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "rocehil/agent/protocol.hpp"
#include "rocehil/agent/stdio_loop.hpp"

namespace rocehil::agent {
namespace {

class AgentOnPipes : public ::testing::Test {
 protected:
  void SetUp() override {
    int to_agent[2];
    int from_agent[2];
    ASSERT_EQ(pipe2(to_agent, O_CLOEXEC), 0);
    ASSERT_EQ(pipe2(from_agent, O_CLOEXEC), 0);
    in_ = to_agent[1];
    out_ = from_agent[0];
    agent_ = std::thread([=, this] {
      exit_code_ = run_agent_stdio(to_agent[0], from_agent[1], "test");
      ::close(to_agent[0]);
      ::close(from_agent[1]);
    });
  }
  void TearDown() override {
    if (in_ >= 0) ::close(in_);
    if (agent_.joinable()) agent_.join();
    ::close(out_);
  }

  void send(const Request& request) {
    const std::string line = to_json_line(request) + "\n";
    ASSERT_EQ(::write(in_, line.data(), line.size()), static_cast<ssize_t>(line.size()));
  }

  // The next reply, stats skipped; fails the test after 10 s of silence.
  Reply next() {
    while (true) {
      const auto nl = buffer_.find('\n');
      if (nl != std::string::npos) {
        const std::string line = buffer_.substr(0, nl);
        buffer_.erase(0, nl + 1);
        ParsedReply parsed = parse_reply(line);
        EXPECT_TRUE(parsed.reply.has_value()) << parsed.error << ": " << line;
        if (!parsed.reply) return Reply{std::nullopt, ErrorReply{"unparsable"}};
        if (std::holds_alternative<StatsEvent>(parsed.reply->body)) continue;
        return *parsed.reply;
      }
      pollfd p{out_, POLLIN, 0};
      if (poll(&p, 1, 10000) <= 0) {
        ADD_FAILURE() << "the agent said nothing for 10 s";
        return Reply{std::nullopt, ErrorReply{"silence"}};
      }
      char chunk[65536];
      const ssize_t n = ::read(out_, chunk, sizeof chunk);
      if (n <= 0) {
        ADD_FAILURE() << "the agent closed its output";
        return Reply{std::nullopt, ErrorReply{"closed"}};
      }
      buffer_.append(chunk, static_cast<std::size_t>(n));
    }
  }

  int in_ = -1;
  int out_ = -1;
  int exit_code_ = -1;
  std::thread agent_;
  std::string buffer_;
};

// The soft provider binds the RoCEv2 port on its address, as a NIC owns its address: sessions on
// one host use one address each, as the ranks of a host's NICs do.
SetupRequest soft_setup(const std::string& address = "127.0.0.1") {
  SetupRequest s;
  s.provider = "soft";
  s.address = address;
  s.qps = 1;
  s.message_bytes = 4096;
  return s;
}

TEST_F(AgentOnPipes, EachSessionIsItsOwnStateMachine) {
  send(Request{1, SetupRequest(soft_setup()), 5});
  Reply setup = next();
  EXPECT_EQ(setup.session, 5u);
  ASSERT_TRUE(std::holds_alternative<SetupReply>(setup.body))
      << std::get<ErrorReply>(setup.body).message;

  // Session 6 has set nothing up: its connect is refused in its own name, session 5 unaffected.
  send(Request{2, ConnectRequest{}, 6});
  const Reply refused = next();
  EXPECT_EQ(refused.session, 6u);
  EXPECT_EQ(refused.id, 2u);
  EXPECT_TRUE(std::holds_alternative<ErrorReply>(refused.body));

  // Session 7 sets up beside session 5, on the host's second address.
  send(Request{4, SetupRequest(soft_setup("127.0.0.2")), 7});
  const Reply seven = next();
  EXPECT_EQ(seven.session, 7u);
  EXPECT_TRUE(std::holds_alternative<SetupReply>(seven.body));
}

// The sockets this process has bound to `local`, as /proc/net/udp writes it ("0100007F:12B7"
// is 127.0.0.1:4791).
int udp_sockets_bound_to(const std::string& local) {
  std::ifstream table("/proc/net/udp");
  std::string line;
  int n = 0;
  while (std::getline(table, line))
    if (line.find(" " + local + " ") != std::string::npos) ++n;
  return n;
}

TEST_F(AgentOnPipes, AnEndedSessionReleasesWhatItHeldAndOthersGoOn) {
  const std::string one = "0100007F:12B7", two = "0200007F:12B7";  // 127.0.0.1 and .2, 4791
  const int one_before = udp_sockets_bound_to(one), two_before = udp_sockets_bound_to(two);
  send(Request{1, SetupRequest(soft_setup("127.0.0.1")), 1});
  ASSERT_TRUE(std::holds_alternative<SetupReply>(next().body));
  send(Request{2, SetupRequest(soft_setup("127.0.0.2")), 2});
  ASSERT_TRUE(std::holds_alternative<SetupReply>(next().body));
  // A second session on 127.0.0.1 shares its RoCEv2 port, as two processes share a NIC: in one
  // agent, its very socket.
  send(Request{3, SetupRequest(soft_setup("127.0.0.1")), 3});
  EXPECT_TRUE(std::holds_alternative<SetupReply>(next().body));
  EXPECT_EQ(udp_sockets_bound_to(one), one_before + 1);

  send(Request{4, EndRequest{}, 1});
  const Reply ended = next();
  EXPECT_EQ(ended.session, 1u);
  EXPECT_EQ(ended.id, 4u);
  EXPECT_TRUE(std::holds_alternative<EndedReply>(ended.body));
  // Session 3 still uses the socket, and session 2 its own.
  EXPECT_EQ(udp_sockets_bound_to(one), one_before + 1);
  EXPECT_EQ(udp_sockets_bound_to(two), two_before + 1);
  // The last session on it ends: it is closed.
  send(Request{5, EndRequest{}, 3});
  EXPECT_TRUE(std::holds_alternative<EndedReply>(next().body));
  EXPECT_EQ(udp_sockets_bound_to(one), one_before);
  // Ending a session that is not open is answered all the same.
  send(Request{7, EndRequest{}, 99});
  const Reply none = next();
  EXPECT_EQ(none.session, 99u);
  EXPECT_TRUE(std::holds_alternative<EndedReply>(none.body));
}

TEST_F(AgentOnPipes, SessionsAtOnceAreBounded) {
  for (SessionId s = 1; s <= max_agent_sessions; ++s) {
    send(Request{s, HelloRequest{}, s});
    const Reply hello = next();
    ASSERT_EQ(hello.session, s);
    ASSERT_TRUE(std::holds_alternative<HelloReply>(hello.body));
  }
  send(Request{0, HelloRequest{}, 100000});
  const Reply refused = next();
  EXPECT_EQ(refused.session, 100000u);
  ASSERT_TRUE(std::holds_alternative<ErrorReply>(refused.body));
  EXPECT_NE(std::get<ErrorReply>(refused.body).message.find("256 sessions"), std::string::npos);
  // Ending one makes room.
  send(Request{0, EndRequest{}, 1});
  EXPECT_TRUE(std::holds_alternative<EndedReply>(next().body));
  send(Request{0, HelloRequest{}, 100000});
  EXPECT_TRUE(std::holds_alternative<HelloReply>(next().body));
}

TEST_F(AgentOnPipes, AnUnreadableLineIsAnsweredInItsSession) {
  const std::string line = R"({"v":1,"op":"setup","id":8,"session":12,"qps":0})"
                           "\n";
  ASSERT_EQ(::write(in_, line.data(), line.size()), static_cast<ssize_t>(line.size()));
  const Reply refused = next();
  EXPECT_EQ(refused.session, 12u);
  EXPECT_EQ(refused.id, 8u);
  EXPECT_TRUE(std::holds_alternative<ErrorReply>(refused.body));
}

TEST_F(AgentOnPipes, ClosingTheConnectionEndsEverySession) {
  for (SessionId s = 1; s <= 3; ++s) {
    send(Request{s, SetupRequest(soft_setup(fmt::format("127.0.0.{}", s))), s});
    ASSERT_TRUE(std::holds_alternative<SetupReply>(next().body));
  }
  ::close(in_);
  in_ = -1;
  agent_.join();
  EXPECT_EQ(exit_code_, 0);
  // Every session released its address's RoCEv2 port.
  for (int s = 1; s <= 3; ++s) {
    const int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    sockaddr_in at{};
    at.sin_family = AF_INET;
    at.sin_port = htons(4791);
    at.sin_addr.s_addr = htonl(0x7f000000u + static_cast<std::uint32_t>(s));
    EXPECT_EQ(::bind(fd, reinterpret_cast<const sockaddr*>(&at), sizeof at), 0) << "127.0.0." << s;
    ::close(fd);
  }
}

}  // namespace
}  // namespace rocehil::agent
