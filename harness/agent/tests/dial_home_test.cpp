// An agent dialing home over real TCP on loopback, to a controller's gate run by the test: it
// proves the run's secret, answers the protocol over TLS as over stdio, and ends when the
// controller goes; refusals and an absent controller are errors that name the address.
#include "rocehil/agent/dial_home.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <future>
#include <string>
#include <thread>
#include <vector>

#include "rocehil/channel/agent_gate.hpp"
#include "rocehil/common/error.hpp"

namespace rocehil::agent {
namespace {

struct Recorder : channel::GateEvents {
  std::vector<channel::Joined> joins;
  std::vector<std::string> refusals;
  void joined(channel::Joined j) override { joins.push_back(std::move(j)); }
  void refused(const std::string& peer, const std::string& why) override {
    refusals.push_back(peer + ": " + why);
  }
};

struct Controller {
  channel::RunSecret secret = channel::RunSecret::generate();
  channel::TlsContext context{channel::Side::controller, secret, "run-7"};
  Recorder events;
  channel::EventLoop loop;
  std::uint16_t port = 0;
  int listen_fd = channel::listen_for_agents("127.0.0.1", 0, port);
  channel::AgentGate gate{loop, context, listen_fd, {}, events};
  ~Controller() { ::close(listen_fd); }

  DialOptions dial() const {
    DialOptions o;
    o.address = "127.0.0.1";
    o.port = port;
    o.run_id = "run-7";
    return o;
  }
  void turn_until(const std::function<bool()>& done) {
    for (int i = 0; i < 2000 && !done(); ++i) loop.run_once(std::chrono::milliseconds(5));
  }
};

// One line from a joined agent, waiting for its socket.
std::string read_line(channel::Joined& agent) {
  std::string got;
  std::vector<char> buffer(4096);
  for (int i = 0; i < 500 && got.find('\n') == std::string::npos; ++i) {
    pollfd ready{agent.fd, POLLIN, 0};
    ::poll(&ready, 1, 10);
    const channel::Transfer t = agent.session->read(buffer);
    got.append(buffer.data(), t.bytes);
    if (t.closed || t.step == channel::Step::failed) break;
  }
  return got;
}

TEST(DialHome, AnAgentDialsInProvesTheSecretAndAnswersAsOverStdio) {
  Controller c;
  auto agent = std::async(std::launch::async,
                          [&] { return run_agent_dialing(c.dial(), c.secret, "test-version"); });
  c.turn_until([&] { return !c.events.joins.empty(); });
  ASSERT_EQ(c.events.joins.size(), 1u) << (c.events.refusals.empty() ? "" : c.events.refusals[0]);
  channel::Joined& joined = c.events.joins[0];

  const std::string hello = "{\"v\":1,\"op\":\"hello\",\"id\":1}\n";
  ASSERT_EQ(joined.session->write(hello).bytes, hello.size());
  const std::string reply = read_line(joined);
  EXPECT_NE(reply.find("\"op\":\"hello\""), std::string::npos) << reply;
  EXPECT_NE(reply.find("test-version"), std::string::npos) << reply;
  const std::string bad = "{\"v\":1,\"op\":\"fly\",\"id\":2}\n";
  ASSERT_EQ(joined.session->write(bad).bytes, bad.size());
  EXPECT_NE(read_line(joined).find("\"op\":\"error\""), std::string::npos);
  const std::string admitted = "{\"v\":1,\"op\":\"admission\",\"admitted\":true,\"host\":\"h1\"}\n";
  ASSERT_EQ(joined.session->write(admitted).bytes, admitted.size());

  // Admitted, then the controller goes: the agent stops and returns.
  joined.session.reset();
  ::close(joined.fd);
  ASSERT_EQ(agent.wait_for(std::chrono::seconds(30)), std::future_status::ready);
  EXPECT_EQ(agent.get(), 0);
}

// A controller that goes before it admitted the agent (it refused the hello, or died): the
// agent did not join, and says so, exit 3.
TEST(DialHome, AConnectionClosedBeforeAdmissionIsAFailureToJoin) {
  Controller c;
  auto agent = std::async(std::launch::async,
                          [&] { return run_agent_dialing(c.dial(), c.secret, "test-version"); });
  c.turn_until([&] { return !c.events.joins.empty(); });
  ASSERT_EQ(c.events.joins.size(), 1u);
  channel::Joined& joined = c.events.joins[0];
  const std::string refused =
      "{\"v\":1,\"op\":\"admission\",\"admitted\":false,\"why\":\"host 'h9' is not in the "
      "inventory\"}\n";
  ASSERT_EQ(joined.session->write(refused).bytes, refused.size());
  joined.session.reset();
  ::close(joined.fd);
  ASSERT_EQ(agent.wait_for(std::chrono::seconds(30)), std::future_status::ready);
  try {
    agent.get();
    FAIL() << "a refused agent returned as if it had served";
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), ExitCode::infrastructure);
    EXPECT_NE(std::string(e.what()).find("refused it: host 'h9' is not in the inventory"),
              std::string::npos)
        << e.what();
  }
}

TEST(DialHome, AnAgentWithAnotherSecretIsRefusedAndTheControllerLogsOneLine) {
  Controller c;
  const channel::RunSecret wrong = channel::RunSecret::generate();
  auto agent = std::async(std::launch::async,
                          [&] { return run_agent_dialing(c.dial(), wrong, "test-version"); });
  c.turn_until([&] { return !c.events.refusals.empty(); });
  ASSERT_EQ(agent.wait_for(std::chrono::seconds(30)), std::future_status::ready);
  try {
    agent.get();
    FAIL() << "an agent without the run's secret was served";
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), ExitCode::infrastructure);
    EXPECT_NE(std::string(e.what()).find("the controller at 127.0.0.1:"), std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("refused"), std::string::npos) << e.what();
  }
  ASSERT_EQ(c.events.refusals.size(), 1u);
  EXPECT_EQ(c.events.refusals[0],
            "127.0.0.1: the agent does not hold this run's secret (its key does not verify)");
  EXPECT_TRUE(c.events.joins.empty());
}

TEST(DialHome, NoControllerListeningIsAnErrorNamingWhere) {
  std::uint16_t port = 0;
  ::close(channel::listen_for_agents("127.0.0.1", 0, port));  // a port nobody listens on now
  DialOptions o;
  o.address = "127.0.0.1";
  o.port = port;
  o.run_id = "run-7";
  try {
    run_agent_dialing(o, channel::RunSecret::generate(), "v");
    FAIL() << "dialing nobody succeeded";
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), ExitCode::infrastructure);
    EXPECT_NE(std::string(e.what()).find(fmt::format(
                  "cannot reach the controller at 127.0.0.1:{}: Connection refused", port)),
              std::string::npos)
        << e.what();
  }
}

TEST(DialHome, WithWaitAnAgentStartedBeforeItsControllerJoinsOnceItListens) {
  std::uint16_t port = 0;
  ::close(channel::listen_for_agents("127.0.0.1", 0, port));  // nobody listens there yet
  const channel::RunSecret secret = channel::RunSecret::generate();
  DialOptions o;
  o.address = "127.0.0.1";
  o.port = port;
  o.run_id = "run-7";
  o.retry_for = std::chrono::seconds(20);
  auto agent = std::async(std::launch::async, [&] { return run_agent_dialing(o, secret, "v"); });
  std::this_thread::sleep_for(std::chrono::milliseconds(600));  // it has been refused a few times
  const channel::TlsContext context(channel::Side::controller, secret, "run-7");
  Recorder events;
  channel::EventLoop loop;
  std::uint16_t bound = 0;
  const int listen_fd = channel::listen_for_agents("127.0.0.1", port, bound);
  {
    channel::AgentGate gate(loop, context, listen_fd, {}, events);
    for (int i = 0; i < 2000 && events.joins.empty(); ++i)
      loop.run_once(std::chrono::milliseconds(5));
    ASSERT_EQ(events.joins.size(), 1u);
    const std::string admitted = "{\"v\":1,\"op\":\"admission\",\"admitted\":true}\n";
    ASSERT_EQ(events.joins[0].session->write(admitted).bytes, admitted.size());
    events.joins[0].session.reset();
    ::close(events.joins[0].fd);  // the controller goes: the agent ends
  }
  ::close(listen_fd);
  ASSERT_EQ(agent.wait_for(std::chrono::seconds(30)), std::future_status::ready);
  EXPECT_EQ(agent.get(), 0);
}

TEST(DialHome, TheControlSocketProbesAControllerThatWentSilent) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  ASSERT_GE(fd, 0);
  configure_control_socket(fd);
  const auto option = [fd](int level, int name) {
    int value = -1;
    socklen_t len = sizeof value;
    EXPECT_EQ(::getsockopt(fd, level, name, &value, &len), 0);
    return value;
  };
  EXPECT_EQ(option(SOL_SOCKET, SO_KEEPALIVE), 1);
  EXPECT_EQ(option(IPPROTO_TCP, TCP_KEEPIDLE), 10);
  EXPECT_EQ(option(IPPROTO_TCP, TCP_KEEPINTVL), 5);
  EXPECT_EQ(option(IPPROTO_TCP, TCP_KEEPCNT), 3);
  EXPECT_EQ(option(IPPROTO_TCP, TCP_NODELAY), 1);
  ::close(fd);
}

TEST(DialHome, TheControllersAddressIsAddressColonPort) {
  DialOptions o;
  parse_connect_address("198.19.0.1:7000", o);
  EXPECT_EQ(o.address, "198.19.0.1");
  EXPECT_EQ(o.port, 7000);
  for (const char* bad :
       {"198.19.0.1", "198.19.0.1:", ":7000", "198.19.0.1:0", "198.19.0.1:65536", "198.19.0.1:70x"})
    EXPECT_THROW(parse_connect_address(bad, o), Error) << bad;
}

TEST(DialHome, TheSecretComesFromStdinsFirstLineAndLeavesTheRest) {
  const channel::RunSecret s = channel::RunSecret::generate();
  int p[2];
  ASSERT_EQ(::pipe(p), 0);
  const std::string text = s.for_launcher() + "\n{\"v\":1}\n";
  ASSERT_EQ(::write(p[1], text.data(), text.size()), static_cast<ssize_t>(text.size()));
  ::close(p[1]);
  ::unsetenv("ROCEHIL_RUN_SECRET");
  EXPECT_TRUE(read_run_secret(p[0]) == s);
  char rest[16] = {};
  EXPECT_EQ(::read(p[0], rest, sizeof rest), 8);
  EXPECT_EQ(std::string(rest, 8), "{\"v\":1}\n");
  ::close(p[0]);

  ASSERT_EQ(::pipe(p), 0);
  ::close(p[1]);  // nothing on stdin, nothing in the environment
  EXPECT_THROW(read_run_secret(p[0]), Error);
  ::close(p[0]);
}

}  // namespace
}  // namespace rocehil::agent
