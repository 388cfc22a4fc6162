// The gate agents dial, over real TCP on loopback: an agent with the run's secret joins and its
// connection is handed over; wrong secrets, plain text, garbage, silence and a flood from one
// address are each refused with one line, and an agent dialing beside them still joins.
#include "rocehil/channel/agent_gate.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <memory>
#include <string>
#include <vector>

namespace rocehil::channel {
namespace {

using Clock = std::chrono::steady_clock;

// A TCP connection to the gate from `source` (any 127.0.0.0/8 address is this machine's),
// connected, then non-blocking.
int dial(std::uint16_t port, const char* source = "127.0.0.1") {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in from{};
  from.sin_family = AF_INET;
  ::inet_pton(AF_INET, source, &from.sin_addr);
  EXPECT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&from), sizeof from), 0);
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(port);
  ::inet_pton(AF_INET, "127.0.0.1", &to.sin_addr);
  EXPECT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&to), sizeof to), 0);
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
  return fd;
}

struct Recorder : GateEvents {
  std::vector<Joined> joins;
  std::vector<std::string> refusals;
  void joined(Joined j) override { joins.push_back(std::move(j)); }
  void refused(const std::string& peer, const std::string& why) override {
    refusals.push_back(peer + ": " + why);
  }
  ~Recorder() override {
    for (Joined& j : joins) {
      j.session.reset();
      ::close(j.fd);
    }
  }
};

// An agent dialing in, its handshake run a step at a time beside the gate's loop.
struct Agent {
  int fd;
  TlsContext context;
  TlsSession session;
  Step step = Step::want_write;
  Agent(std::uint16_t port, const RunSecret& secret, const char* source = "127.0.0.1")
      : fd(dial(port, source)), context(Side::agent, secret, "run-1"), session(context, fd) {}
  ~Agent() { ::close(fd); }
  void turn() {
    if (step == Step::want_read || step == Step::want_write) step = session.handshake();
  }
};

struct Gate {
  RunSecret secret = RunSecret::generate();
  TlsContext context{Side::controller, secret, "run-1"};
  Recorder events;
  EventLoop loop;
  std::uint16_t port = 0;
  int listen_fd = listen_for_agents("127.0.0.1", 0, port);
  std::unique_ptr<AgentGate> gate;
  explicit Gate(GateLimits limits = {})
      : gate(std::make_unique<AgentGate>(loop, context, listen_fd, limits, events)) {}
  ~Gate() {
    gate.reset();
    ::close(listen_fd);
  }
  // Turns of the agents and the loop until `done` or a bounded number of turns.
  template <typename Done>
  void run(std::vector<Agent*> agents, Done done) {
    for (int i = 0; i < 500 && !done(); ++i) {
      for (Agent* a : agents) a->turn();
      loop.run_once(std::chrono::milliseconds(2));
    }
  }
};

TEST(AgentGate, AnAgentWithTheRunsSecretJoinsAndItsConnectionIsHandedOver) {
  Gate g;
  Agent agent(g.port, g.secret);
  g.run({&agent}, [&] { return !g.events.joins.empty() && agent.step == Step::done; });
  ASSERT_EQ(g.events.joins.size(), 1u) << (g.events.refusals.empty() ? "" : g.events.refusals[0]);
  EXPECT_EQ(g.events.joins[0].peer, "127.0.0.1");
  EXPECT_TRUE(g.events.refusals.empty());
  EXPECT_EQ(g.gate->handshakes_in_progress(), 0u);
  EXPECT_EQ(g.loop.watched(), 1u);  // the listener; the joined connection is the receiver's

  const std::string line = "{\"op\":\"hello\"}\n";
  ASSERT_EQ(agent.session.write(line).bytes, line.size());
  std::vector<char> buffer(64);
  Transfer got;
  for (int i = 0; i < 100 && got.bytes == 0; ++i) {
    pollfd ready{g.events.joins[0].fd, POLLIN, 0};
    ::poll(&ready, 1, 10);
    got = g.events.joins[0].session->read(buffer);
  }
  EXPECT_EQ(std::string(buffer.data(), got.bytes), line);
}

TEST(AgentGate, WrongSecretPlainTextAndGarbageAreEachRefusedWithOneLineAndAnAgentStillJoins) {
  Gate g;
  Agent impostor(g.port, RunSecret::generate());
  const int plain = dial(g.port);
  const int garbage = dial(g.port);
  const std::string hello = "{\"op\":\"hello\",\"id\":1,\"host\":\"h1\"}\n";
  ASSERT_EQ(::write(plain, hello.data(), hello.size()), static_cast<ssize_t>(hello.size()));
  std::string noise(300, '\0');
  for (std::size_t i = 0; i < noise.size(); ++i) noise[i] = static_cast<char>(i * 151 + 3);
  ASSERT_EQ(::write(garbage, noise.data(), noise.size()), static_cast<ssize_t>(noise.size()));
  Agent agent(g.port, g.secret, "127.0.0.2");
  g.run({&impostor, &agent},
        [&] { return g.events.refusals.size() == 3 && g.events.joins.size() == 1; });
  ASSERT_EQ(g.events.joins.size(), 1u);
  EXPECT_EQ(g.events.joins[0].peer, "127.0.0.2");
  ASSERT_EQ(g.events.refusals.size(), 3u);
  int secrets = 0;
  for (const std::string& r : g.events.refusals) {
    EXPECT_TRUE(r.starts_with("127.0.0.1: ")) << r;
    EXPECT_EQ(r.find('\n'), std::string::npos) << r;
    if (r == "127.0.0.1: the agent does not hold this run's secret (its key does not verify)")
      ++secrets;
  }
  EXPECT_EQ(secrets, 1);
  EXPECT_EQ(g.gate->handshakes_in_progress(), 0u);
  ::close(plain);
  ::close(garbage);
}

TEST(AgentGate, AConnectionThatSaysNothingIsClosedAtItsDeadline) {
  GateLimits limits;
  limits.handshake_deadline = std::chrono::milliseconds(100);
  Gate g(limits);
  const int silent = dial(g.port);
  g.run({}, [&] { return g.gate->handshakes_in_progress() == 1; });
  ASSERT_EQ(g.gate->handshakes_in_progress(), 1u);
  g.gate->expire(Clock::now() + std::chrono::milliseconds(50));  // not yet
  EXPECT_EQ(g.gate->handshakes_in_progress(), 1u);
  g.gate->expire(Clock::now() + std::chrono::seconds(1));
  EXPECT_EQ(g.gate->handshakes_in_progress(), 0u);
  ASSERT_EQ(g.events.refusals.size(), 1u);
  EXPECT_EQ(g.events.refusals[0],
            "127.0.0.1: did not complete the handshake within 0.1 s; connection closed");
  // The gate's end of it is closed: the client reads end of file.
  char byte;
  ssize_t n = -1;
  for (int i = 0; i < 100 && n < 0; ++i) n = ::read(silent, &byte, 1);
  EXPECT_EQ(n, 0);
  ::close(silent);
}

TEST(AgentGate, AThousandConnectionsFromOneAddressHoldOnlyItsShareAndAnotherHostStillJoins) {
  GateLimits limits;
  limits.per_address = 64;
  Gate g(limits);
  std::vector<int> flood;
  for (int i = 0; i < 1000; ++i) flood.push_back(dial(g.port));
  Agent agent(g.port, g.secret, "127.0.0.2");
  g.run({&agent}, [&] { return g.events.refusals.size() == 936 && g.events.joins.size() == 1; });
  EXPECT_EQ(g.gate->handshakes_in_progress(), 64u);
  ASSERT_EQ(g.events.refusals.size(), 936u);
  EXPECT_EQ(g.events.refusals.back(),
            "127.0.0.1: 64 handshakes already in progress from this address (the limit); "
            "connection closed");
  ASSERT_EQ(g.events.joins.size(), 1u);
  EXPECT_EQ(g.events.joins[0].peer, "127.0.0.2");
  // The 64 it held go at their deadline, and the address may dial again.
  g.gate->expire(Clock::now() + limits.handshake_deadline);
  EXPECT_EQ(g.gate->handshakes_in_progress(), 0u);
  EXPECT_EQ(g.events.refusals.size(), 1000u);
  Agent again(g.port, g.secret);
  g.run({&again}, [&] { return g.events.joins.size() == 2; });
  EXPECT_EQ(g.events.joins.size(), 2u);
  for (const int fd : flood) ::close(fd);
}

// No descriptor left for a waiting connection (the limit lowered for real): the gate stops
// watching its listener, so the loop sleeps instead of spinning, and accepts once there are
// descriptors again and the pause is over.
TEST(AgentGate, WithNoDescriptorLeftTheListenerPausesInsteadOfSpinning) {
  Gate g;
  rlimit before{};
  ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &before), 0);
  // Every descriptor up to the lowered limit taken: the next accept() has none.
  std::vector<int> filler;
  const int probe = ::dup(0);
  ASSERT_GE(probe, 0);
  rlimit low = before;
  low.rlim_cur = static_cast<rlim_t>(probe) + 2;
  ::close(probe);
  const int waiting = dial(g.port);  // queued in the kernel, not yet accepted
  ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &low), 0);
  for (int fd; (fd = ::dup(0)) >= 0;) filler.push_back(fd);
  EXPECT_EQ(g.loop.run_once(std::chrono::milliseconds(50)), 1);  // accept: EMFILE
  ASSERT_TRUE(g.gate->accepting_paused_until().has_value());
  // Still queued and readable, yet the loop has nothing to run: it is not woken again.
  EXPECT_EQ(g.loop.run_once(std::chrono::milliseconds(20)), 0);
  EXPECT_EQ(g.loop.run_once(std::chrono::milliseconds(20)), 0);
  for (const int fd : filler) ::close(fd);
  ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &before), 0);
  g.gate->expire(*g.gate->accepting_paused_until());
  EXPECT_FALSE(g.gate->accepting_paused_until().has_value());
  g.run({}, [&] { return g.gate->handshakes_in_progress() == 1; });
  EXPECT_EQ(g.gate->handshakes_in_progress(), 1u);  // the waiting connection, accepted now
  ::close(waiting);
}

}  // namespace
}  // namespace rocehil::channel
