// The control channel over real sockets (AF_UNIX stream pairs, as TCP would carry the same
// bytes): both sides holding the run's secret connect and carry lines both ways; anything else
// is refused at the handshake with a line that says what it was.
#include "rocehil/channel/tls_session.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <openssl/evp.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>
#include <vector>

namespace rocehil::channel {
namespace {

struct SocketPair {
  int ends[2] = {-1, -1};
  SocketPair() {
    EXPECT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, ends), 0);
  }
  ~SocketPair() {
    for (const int fd : ends)
      if (fd >= 0) ::close(fd);
  }
  int agent() const { return ends[0]; }
  int controller() const { return ends[1]; }
};

const RunSecret& secret_a() {
  static const RunSecret s = RunSecret::generate();
  return s;
}

bool settled(Step s) {
  return s == Step::done || s == Step::failed;
}

// Both handshakes driven until neither waits for the other (each step moves bytes or ends).
std::pair<Step, Step> pump(TlsSession& agent, TlsSession& controller) {
  Step a = Step::want_write, c = Step::want_read;
  for (int i = 0; i < 1000 && !(settled(a) && settled(c)); ++i) {
    if (!settled(a)) a = agent.handshake();
    if (!settled(c)) c = controller.handshake();
  }
  return {a, c};
}

// Everything readable on `fd` now (non-blocking).
std::string drain(int fd) {
  std::string out;
  char buffer[4096];
  ssize_t n;
  while ((n = ::read(fd, buffer, sizeof buffer)) > 0) out.append(buffer, static_cast<size_t>(n));
  return out;
}

void write_all(int fd, const std::string& bytes) {
  ASSERT_EQ(::write(fd, bytes.data(), bytes.size()), static_cast<ssize_t>(bytes.size()));
}

// A controller session fed `bytes` as if from a client, driven until it settles.
std::pair<Step, std::string> controller_given(const std::string& bytes) {
  SocketPair wire;
  const TlsContext context(Side::controller, secret_a(), "run-1");
  TlsSession controller(context, wire.controller());
  write_all(wire.agent(), bytes);
  Step s = Step::want_read;
  for (int i = 0; i < 10 && s == Step::want_read; ++i) s = controller.handshake();
  return {s, controller.failure()};
}

// An agent and a controller session on the two ends of one socket pair.
struct Pair {
  SocketPair wire;
  TlsContext agent_side, controller_side;
  TlsSession agent, controller;
  Pair(const RunSecret& agent_secret, std::string_view agent_run, const RunSecret& secret,
       std::string_view run)
      : agent_side(Side::agent, agent_secret, agent_run),
        controller_side(Side::controller, secret, run),
        agent(agent_side, wire.agent()),
        controller(controller_side, wire.controller()) {}
};

TEST(TlsSession, BothSidesWithTheRunsSecretConnectAndCarryLinesBothWays) {
  Pair p(secret_a(), "run-1", secret_a(), "run-1");
  TlsSession& agent = p.agent;
  TlsSession& controller = p.controller;
  const auto [a, c] = pump(agent, controller);
  ASSERT_EQ(a, Step::done) << agent.failure();
  ASSERT_EQ(c, Step::done) << controller.failure();
  EXPECT_EQ(controller.peer_run_id(), "run-1");

  const std::string hello = R"({"op":"hello","id":1})"
                            "\n";
  EXPECT_EQ(agent.write(hello).bytes, hello.size());
  std::vector<char> buffer(256);
  const Transfer got = controller.read(buffer);
  ASSERT_EQ(got.step, Step::done) << controller.failure();
  EXPECT_EQ(std::string(buffer.data(), got.bytes), hello);

  const std::string reply = R"({"op":"hello","id":1,"ok":true})"
                            "\n";
  EXPECT_EQ(controller.write(reply).bytes, reply.size());
  const Transfer back = agent.read(buffer);
  EXPECT_EQ(std::string(buffer.data(), back.bytes), reply);
  // Nothing more to read yet: the socket must be readable first, not an error.
  EXPECT_EQ(agent.read(buffer).step, Step::want_read);
}

TEST(TlsSession, WhatCrossesTheWireIsNotTheText) {
  Pair p(secret_a(), "run-1", secret_a(), "run-1");
  ASSERT_EQ(pump(p.agent, p.controller), std::make_pair(Step::done, Step::done));
  const std::string secret_line = "settings: roce_np.min_time_between_cnps=8\n";
  ASSERT_EQ(p.agent.write(secret_line).bytes, secret_line.size());
  // Read the record off the controller's socket raw: the text is not in it, nor the key.
  const std::string raw = drain(p.wire.controller());
  EXPECT_GT(raw.size(), secret_line.size());  // header and tag around the ciphertext
  EXPECT_EQ(raw.find("roce_np"), std::string::npos);
  EXPECT_EQ(raw.find(secret_a().for_launcher()), std::string::npos);
}

TEST(TlsSession, AnAgentWithAnotherSecretIsRefusedOnBothSides) {
  Pair p(RunSecret::generate(), "run-1", secret_a(), "run-1");
  const auto [a, c] = pump(p.agent, p.controller);
  EXPECT_EQ(c, Step::failed);
  EXPECT_EQ(p.controller.failure(),
            "the agent does not hold this run's secret (its key does not verify)");
  EXPECT_EQ(a, Step::failed);
  EXPECT_NE(p.agent.failure().find("refused this agent's secret"), std::string::npos)
      << p.agent.failure();
}

TEST(TlsSession, AControllerWithoutTheSecretIsRefusedByTheAgentEvenWithACertificate) {
  // An impostor listening where the agent dials: plain TLS 1.3 with a self-signed certificate
  // and no PSK, which a client trusting nothing but the run's key must not accept.
  EVP_PKEY* key = EVP_EC_gen("P-256");
  ASSERT_NE(key, nullptr);
  X509* cert = X509_new();
  ASN1_INTEGER_set(X509_get_serialNumber(cert), 1);
  X509_gmtime_adj(X509_getm_notBefore(cert), 0);
  X509_gmtime_adj(X509_getm_notAfter(cert), 3600);
  X509_set_pubkey(cert, key);
  X509_NAME* name = X509_get_subject_name(cert);
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                             reinterpret_cast<const unsigned char*>("controller"), -1, -1, 0);
  X509_set_issuer_name(cert, name);
  ASSERT_GT(X509_sign(cert, key, EVP_sha256()), 0);
  SSL_CTX* ctx = SSL_CTX_new(TLS_server_method());
  ASSERT_EQ(SSL_CTX_use_certificate(ctx, cert), 1);
  ASSERT_EQ(SSL_CTX_use_PrivateKey(ctx, key), 1);

  SocketPair wire;
  const TlsContext agent_side(Side::agent, secret_a(), "run-1");
  TlsSession agent(agent_side, wire.agent());
  SSL* impostor = SSL_new(ctx);
  SSL_set_fd(impostor, wire.controller());
  SSL_set_accept_state(impostor);
  Step a = Step::want_write;
  for (int i = 0; i < 1000 && !settled(a); ++i) {
    a = agent.handshake();
    SSL_do_handshake(impostor);
  }
  EXPECT_EQ(a, Step::failed);
  EXPECT_EQ(agent.failure(),
            "the controller did not prove it holds this run's secret (it offered a certificate "
            "instead of the run's key)");
  SSL_free(impostor);
  SSL_CTX_free(ctx);
  X509_free(cert);
  EVP_PKEY_free(key);
}

TEST(TlsSession, AnAgentOfAnotherRunIsNamedAndRefused) {
  Pair p(secret_a(), "20261127T0300Z-nightly", secret_a(), "20261128T0300Z-nightly");
  const auto [a, c] = pump(p.agent, p.controller);
  EXPECT_EQ(c, Step::failed);
  EXPECT_EQ(a, Step::failed);
  EXPECT_EQ(p.controller.failure(),
            "an agent of run '20261127T0300Z-nightly' dialed in; this is run "
            "'20261128T0300Z-nightly'");
}

TEST(TlsSession, PlainTextIsRefused) {
  const auto [step, why] = controller_given(R"({"op":"hello","id":1,"host":"h1"})"
                                            "\n");
  EXPECT_EQ(step, Step::failed);
  EXPECT_NE(why.find("the TLS handshake failed"), std::string::npos) << why;
}

TEST(TlsSession, GarbageIsRefused) {
  std::string garbage;
  for (int i = 0; i < 512; ++i) garbage += static_cast<char>((i * 131 + 7) & 0xff);
  const auto [step, why] = controller_given(garbage);
  EXPECT_EQ(step, Step::failed);
  EXPECT_FALSE(why.empty());
}

TEST(TlsSession, AClientThatSaysNothingLeavesTheHandshakeWaitingNotFailed) {
  // The event loop's deadline ends such a connection; the session itself only waits.
  const auto [step, why] = controller_given("");
  EXPECT_EQ(step, Step::want_read);
  EXPECT_TRUE(why.empty());
}

TEST(TlsSession, AHandshakeRecordedAndReplayedToTheControllerIsRefused) {
  // A real agent's handshake, relayed byte for byte through the test and recorded.
  SocketPair agent_wire, controller_wire;
  const TlsContext agent_side(Side::agent, secret_a(), "run-1");
  const TlsContext controller_side(Side::controller, secret_a(), "run-1");
  TlsSession agent(agent_side, agent_wire.agent());
  TlsSession controller(controller_side, controller_wire.controller());
  std::string recorded;
  Step a = Step::want_write, c = Step::want_read;
  for (int i = 0; i < 1000 && !(settled(a) && settled(c)); ++i) {
    if (!settled(a)) a = agent.handshake();
    const std::string from_agent = drain(agent_wire.controller());
    recorded += from_agent;
    if (!from_agent.empty()) write_all(controller_wire.agent(), from_agent);
    if (!settled(c)) c = controller.handshake();
    const std::string to_agent = drain(controller_wire.agent());
    if (!to_agent.empty()) write_all(agent_wire.controller(), to_agent);
  }
  ASSERT_EQ(a, Step::done) << agent.failure();
  ASSERT_EQ(c, Step::done) << controller.failure();

  // The same bytes to a fresh controller session of the same run: its new key share makes the
  // recorded Finished wrong.
  const auto [step, why] = controller_given(recorded);
  EXPECT_EQ(step, Step::failed);
  EXPECT_FALSE(why.empty());
}

}  // namespace
}  // namespace rocehil::channel
