// The controller's end of agents that dial home, over real TCP and TLS on loopback: the real
// agent's loop dials in from threads of the test (run_agent_dialing, as `rocehil agent --connect`
// runs it); a hand-driven TLS client stands in for an agent only for faults a real one does not
// commit (silence after the handshake, garbage, a connection cut after hello).
#include "rocehil/remote/dialed_agents.hpp"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <future>
#include <string>
#include <vector>

#include "rocehil/agent/dial_home.hpp"
#include "rocehil/common/error.hpp"

namespace rocehil::remote {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

struct Recorder : DialedAgentsEvents {
  std::vector<std::string> joins, refusals, losses;
  void agent_joined(const std::string& host, const std::string& peer) override {
    joins.push_back(host + " from " + peer);
  }
  void agent_refused(const std::string& peer, const std::string& why) override {
    refusals.push_back(peer + ": " + why);
  }
  void agent_lost(const std::string& host, const std::string& why) override {
    losses.push_back(host + ": " + why);
  }
};

// Inventory hosts by name only: the agents in a test all have this host's addresses.
std::vector<ExpectedHost> named(std::initializer_list<const char*> names) {
  std::vector<ExpectedHost> hosts;
  for (const char* n : names) hosts.push_back({n, {}});
  return hosts;
}

// A run's controller and the agents dialing in to it. The agents return once the controller
// has gone, so it goes first.
struct TestRun {
  channel::RunSecret secret = channel::RunSecret::generate();
  Recorder events;
  std::vector<std::future<int>> agents;
  std::unique_ptr<DialedAgents> hub;

  explicit TestRun(std::vector<ExpectedHost> expected, DialedAgentsOptions options = {}) {
    options.listen_address = "127.0.0.1";
    hub = std::make_unique<DialedAgents>(secret, "run-7", std::move(expected), options, events);
  }
  ~TestRun() {
    hub.reset();
    for (auto& a : agents) a.wait();
  }

  void dial(const std::string& as) {
    agent::DialOptions o;
    o.address = "127.0.0.1";
    o.port = hub->port();
    o.run_id = "run-7";
    o.host_name = as;
    agents.push_back(std::async(std::launch::async, [o, s = secret] {
      try {
        return agent::run_agent_dialing(o, s, "test-version");
      } catch (const Error&) {
        return 3;
      }
    }));
  }

  void turn_until(const std::function<bool()>& done) {
    const auto deadline = Clock::now() + 20s;
    while (!done() && Clock::now() < deadline) hub->turn(20ms);
  }
};

// The next reply of type T on `link`, stats skipped; an error reply fails the test.
template <typename T>
T expect(AgentLink& link) {
  while (true) {
    std::optional<agent::Reply> reply = link.receive(Clock::now() + 20s);
    if (!reply) {
      ADD_FAILURE() << "no reply from " << link.name();
      return T{};
    }
    if (std::holds_alternative<agent::StatsEvent>(reply->body)) continue;
    if (const auto* e = std::get_if<agent::ErrorReply>(&reply->body)) {
      ADD_FAILURE() << link.name() << ": " << e->message;
      return T{};
    }
    if (auto* wanted = std::get_if<T>(&reply->body)) return std::move(*wanted);
    ADD_FAILURE() << link.name() << ": reply " << reply->body.index();
    return T{};
  }
}

agent::SetupRequest soft_bw(const std::string& address, agent::Role role) {
  agent::SetupRequest s;
  s.provider = "soft";
  s.address = address;
  s.workload = agent::Workload::bw;
  s.role = role;
  s.opcode = traffic::Opcode::send;  // the server counts what it receives
  s.qps = 2;
  s.message_bytes = 4096;
  return s;
}

TEST(DialedAgents, AgentsJoinByNameAndRunTrafficInSessions) {
  TestRun run(named({"h1", "h2"}));
  run.dial("h1");
  run.dial("h2");
  EXPECT_EQ(run.hub->await_all(Clock::now() + 20s), std::vector<std::string>{});
  EXPECT_EQ(run.hub->joined_count(), 2u);
  ASSERT_NE(run.hub->hello("h2"), nullptr);
  EXPECT_EQ(run.hub->hello("h2")->host, "h2");
  EXPECT_EQ(run.hub->hello("h2")->version, "test-version");
  EXPECT_EQ(run.hub->hello("h3"), nullptr);

  auto server = run.hub->open_session("h1", "h1");
  auto client = run.hub->open_session("h2", "h2");
  server->send({1, soft_bw("127.0.0.1", agent::Role::server)});
  client->send({1, soft_bw("127.0.0.2", agent::Role::client)});
  const auto server_setup = expect<agent::SetupReply>(*server);
  const auto client_setup = expect<agent::SetupReply>(*client);
  ASSERT_EQ(server_setup.endpoints.size(), 2u);
  server->send({2, agent::ConnectRequest{client_setup.endpoints}});
  client->send({2, agent::ConnectRequest{server_setup.endpoints}});
  expect<agent::ConnectedReply>(*server);
  expect<agent::ConnectedReply>(*client);
  const agent::StartRequest start{.seconds = 0.5, .warmup_seconds = 0.1, .stats_ms = 100};
  server->send({3, start});
  client->send({3, start});
  expect<agent::StartedReply>(*server);
  expect<agent::StartedReply>(*client);
  const auto sent = expect<agent::ResultsEvent>(*client);
  server->send({4, agent::StopRequest{}});  // a bw server serves until told
  const auto got = expect<agent::ResultsEvent>(*server);
  EXPECT_GT(sent.messages, 0u);
  EXPECT_EQ(sent.errors, 0u) << sent.first_error;
  EXPECT_GT(got.messages, 0u);
  EXPECT_EQ(got.errors, 0u) << got.first_error;
  EXPECT_TRUE(run.events.refusals.empty()) << run.events.refusals[0];
  ASSERT_EQ(run.events.joins.size(), 2u);
  EXPECT_TRUE(run.events.joins[0].starts_with("h")) << run.events.joins[0];
}

TEST(DialedAgents, AHostThatDidNotDialInIsNamed) {
  TestRun run(named({"h1", "h2", "h3"}));
  run.dial("h3");
  run.dial("h1");
  EXPECT_EQ(run.hub->await_all(Clock::now() + 1s), std::vector<std::string>{"h2"});
  EXPECT_THROW(run.hub->open_session("h2", "h2"), Error);
}

TEST(DialedAgents, ImpostorsAreRefusedWithOneLineEachAndTheRunGoesOn) {
  TestRun run(named({"h1"}));
  run.dial("h1");
  ASSERT_TRUE(run.hub->await_all(Clock::now() + 20s).empty());
  auto session = run.hub->open_session("h1", "h1");
  session->send({1, soft_bw("127.0.0.1", agent::Role::server)});
  expect<agent::SetupReply>(*session);

  run.dial("h9");  // not in the inventory
  run.dial("h1");  // a host twice
  run.turn_until([&] { return run.events.refusals.size() >= 2; });
  ASSERT_EQ(run.events.refusals.size(), 2u);
  std::sort(run.events.refusals.begin(), run.events.refusals.end());
  EXPECT_EQ(run.events.refusals[0],
            "127.0.0.1: an agent on host 'h9' is not in the inventory: no host is named so and "
            "none has its NIC or management addresses (" +
                run.events.refusals[0].substr(run.events.refusals[0].rfind('(') + 1));
  EXPECT_EQ(run.events.refusals[1],
            "127.0.0.1: host 'h1' has joined already, from 127.0.0.1: a second agent for it is "
            "refused");
  // Both refused agents were told why and ended with exit 3 (run_agent_dialing threw the
  // controller's reason), so a launcher that started them sees the failure.
  for (std::size_t a = 1; a < run.agents.size(); ++a) {
    ASSERT_EQ(run.agents[a].wait_for(20s), std::future_status::ready);
    EXPECT_EQ(run.agents[a].get(), 3);
  }
  run.agents.resize(1);
  // The first h1 still holds its setup: a second setup of the same address in another session
  // is refused by the agent, and its session answers.
  session->send({2, agent::HelloRequest{}});
  EXPECT_EQ(expect<agent::HelloReply>(*session).host, "h1");
  EXPECT_EQ(run.hub->joined_count(), 1u);
}

TEST(DialedAgents, AnEndedSessionHasReleasedItsAddressBeforeTheNextSetup) {
  TestRun run(named({"h1"}));
  run.dial("h1");
  ASSERT_TRUE(run.hub->await_all(Clock::now() + 20s).empty());
  for (int round = 0; round < 3; ++round) {
    auto session = run.hub->open_session("h1", "h1");
    session->send({1, soft_bw("127.0.0.1", agent::Role::server)});
    expect<agent::SetupReply>(*session);
    session->close_input();
    EXPECT_THROW(session->send({2, agent::HelloRequest{}}), Error);
  }
}

TEST(DialedAgents, TheControllerGoingEndsEveryAgent) {
  TestRun run(named({"h1", "h2"}));
  run.dial("h1");
  run.dial("h2");
  ASSERT_TRUE(run.hub->await_all(Clock::now() + 20s).empty());
  auto session = run.hub->open_session("h1", "h1");
  session->send({1, soft_bw("127.0.0.1", agent::Role::server)});
  expect<agent::SetupReply>(*session);
  run.hub.reset();
  for (auto& a : run.agents) {
    ASSERT_EQ(a.wait_for(20s), std::future_status::ready);
    EXPECT_EQ(a.get(), 0);
  }
  run.agents.clear();
  // The link outlives the run's controller: it says the connection ended.
  try {
    session->send({2, agent::HelloRequest{}});
    FAIL() << "a session of a closed run sent";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "agent on h1: its connection ended: the controller ended the run");
  }
}

// ---- faults a real agent does not commit: a TLS client driven by hand ----

class HandDrivenAgent {
 public:
  HandDrivenAgent(const TestRun& run, const channel::RunSecret& secret)
      : context_(channel::Side::agent, secret, "run-7") {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in at{};
    at.sin_family = AF_INET;
    at.sin_port = htons(run.hub->port());
    at.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(::connect(fd_, reinterpret_cast<const sockaddr*>(&at), sizeof at), 0);
    tls_ = std::make_unique<channel::TlsSession>(context_, fd_);
  }
  ~HandDrivenAgent() { close(); }

  // The handshake on a blocking socket, while the controller's loop turns in another thread.
  std::future<bool> handshake() {
    return std::async(std::launch::async,
                      [this] { return tls_->handshake() == channel::Step::done; });
  }
  void say(const std::string& text) { tls_->write(text); }
  // Until the controller's next bytes have arrived (unread, they make close() a reset).
  bool wait_readable() {
    pollfd ready{fd_, POLLIN, 0};
    return ::poll(&ready, 1, 20000) == 1;
  }
  void close() {
    tls_.reset();
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

 private:
  channel::TlsContext context_;
  int fd_ = -1;
  std::unique_ptr<channel::TlsSession> tls_;
};

std::string hello_line(const std::string& host) {
  agent::HelloReply hello;
  hello.version = "test-version";
  hello.host = host;
  return agent::to_json_line(agent::Reply{0, hello}) + "\n";
}

// The handshake while the controller's loop turns, then a hello naming `host`.
bool join_by_hand(TestRun& run, HandDrivenAgent& agent, const std::string& host) {
  auto done = agent.handshake();
  run.turn_until([&] { return done.wait_for(0s) == std::future_status::ready; });
  if (!done.get()) return false;
  const std::size_t before = run.hub->joined_count();
  agent.say(hello_line(host));
  run.turn_until([&] { return run.hub->joined_count() > before; });
  return run.hub->joined_count() > before;
}

TEST(DialedAgents, AnAgentSilentAfterItsHandshakeIsRefusedAtItsDeadline) {
  DialedAgentsOptions options;
  options.hello_deadline = 300ms;
  TestRun run(named({"h1"}), options);
  HandDrivenAgent silent(run, run.secret);
  auto done = silent.handshake();
  run.turn_until([&] { return !run.events.refusals.empty(); });
  EXPECT_TRUE(done.get());
  ASSERT_EQ(run.events.refusals.size(), 1u);
  EXPECT_EQ(run.events.refusals[0],
            "127.0.0.1: it proved the run's secret but answered no hello within 300 ms");
}

TEST(DialedAgents, ALostAgentFailsItsSessionsNamingWhy) {
  TestRun run(named({"h1", "h2"}));
  HandDrivenAgent h1(run, run.secret);
  ASSERT_TRUE(join_by_hand(run, h1, "h1"));
  auto session = run.hub->open_session("h1", "h1");
  session->send({1, agent::HelloRequest{}});
  ASSERT_TRUE(h1.wait_readable());
  h1.close();
  try {
    (void)session->receive(Clock::now() + 20s);
    FAIL() << "a lost agent's session answered";
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), ExitCode::infrastructure);
    // It closed with the session's hello unread, so its kernel answered with a reset.
    EXPECT_STREQ(e.what(),
                 "agent on h1: its connection ended: reading failed: Connection reset by peer");
  }
  ASSERT_EQ(run.events.losses.size(), 1u);
  EXPECT_EQ(run.events.losses[0], "h1: reading failed: Connection reset by peer");
  EXPECT_EQ(run.hub->joined_count(), 0u);
}

TEST(DialedAgents, AnAgentSpeakingAnythingButTheProtocolIsDropped) {
  TestRun run(named({"h1"}));
  HandDrivenAgent h1(run, run.secret);
  ASSERT_TRUE(join_by_hand(run, h1, "h1"));
  h1.say("rm -rf /\n");
  run.turn_until([&] { return !run.events.losses.empty(); });
  ASSERT_EQ(run.events.losses.size(), 1u);
  EXPECT_TRUE(run.events.losses[0].starts_with("h1: it said something that is not the protocol: "))
      << run.events.losses[0];
  // And one that answers hello with something else is refused before it joins.
  HandDrivenAgent other(run, run.secret);
  auto other_done = other.handshake();
  run.turn_until([&] { return other_done.wait_for(0s) == std::future_status::ready; });
  ASSERT_TRUE(other_done.get());
  other.say(agent::to_json_line(agent::Reply{0, agent::EndedReply{}}) + "\n");
  run.turn_until([&] { return !run.events.refusals.empty(); });
  ASSERT_EQ(run.events.refusals.size(), 1u);
  EXPECT_EQ(run.events.refusals[0], "127.0.0.1: it answered hello with another reply");
}

TEST(DialedAgents, AnAgentOfAnotherSecretNeverJoins) {
  TestRun run(named({"h1"}));
  HandDrivenAgent stranger(run, channel::RunSecret::generate());
  auto done = stranger.handshake();
  run.turn_until([&] { return !run.events.refusals.empty(); });
  EXPECT_FALSE(done.get());
  ASSERT_EQ(run.events.refusals.size(), 1u);
  EXPECT_NE(run.events.refusals[0].find("does not hold this run's secret"), std::string::npos)
      << run.events.refusals[0];
  EXPECT_EQ(run.hub->joined_count(), 0u);
}

}  // namespace
}  // namespace rocehil::remote
