// Workloads on the soft provider: each side in its own thread with its own provider, on two
// loopback addresses, as two hosts would run them.
#include "rocehil/traffic/workload.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <thread>

namespace rocehil::traffic {
namespace {

struct Side {
  std::unique_ptr<Provider> provider;
  std::unique_ptr<CompletionQueue> cq;
  std::vector<std::unique_ptr<QueuePair>> qps;
  std::vector<MemoryRegion> buffers;
  std::vector<Connection> connections;

  explicit Side(const char* address) {
    ProviderOptions o;
    o.address = address;
    provider = make_provider("soft", o);
    cq = provider->create_cq(8192);
  }
};

// `qps` connected pairs between a and b, each with a buffer of `bytes` on both sides.
void connect(Side& a, Side& b, std::size_t qps, std::uint32_t bytes) {
  for (std::size_t i = 0; i < qps; ++i) {
    for (Side* s : {&a, &b}) {
      s->qps.push_back(s->provider->create_qp(*s->cq, {}));
      s->buffers.push_back(s->provider->register_memory(bytes));
    }
  }
  for (std::size_t i = 0; i < qps; ++i) {
    a.qps[i]->connect(b.qps[i]->local_endpoint());
    b.qps[i]->connect(a.qps[i]->local_endpoint());
  }
  for (std::size_t i = 0; i < qps; ++i) {
    a.connections.push_back(
        {a.qps[i].get(), &a.buffers[i], b.buffers[i].remote_address, b.buffers[i].rkey});
    b.connections.push_back(
        {b.qps[i].get(), &b.buffers[i], a.buffers[i].remote_address, a.buffers[i].rkey});
  }
}

// Runs the requester on `a` and serve() on `b` in its own thread; returns the requester's result
// and, in `received`, the receive completions b saw.
BwResult run_pair(Side& a, Side& b, const BwConfig& config, std::uint64_t* received = nullptr) {
  std::atomic<bool> stop{false};
  std::uint64_t got = 0;
  std::thread responder([&] { got = serve(*b.cq, b.connections, config, stop); });
  BwResult r = run_bw_requester(*a.cq, a.connections, config, stop);
  // Give the responder's last completions a moment before stopping it.
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  stop = true;
  responder.join();
  if (received != nullptr) *received = got;
  return r;
}

TEST(BwWorkload, IterationsAreExactAndSplitOverQps) {
  Side a("127.0.0.1"), b("127.0.0.2");
  connect(a, b, 4, 16384);
  for (std::size_t i = 0; i < a.buffers.size(); ++i)
    std::memset(a.buffers[i].data, static_cast<int>(i + 1), 16384);
  BwConfig config;
  config.message_bytes = 16384;
  config.iterations = 2000;
  config.warmup_seconds = 0;
  const BwResult r = run_pair(a, b, config);
  EXPECT_EQ(r.errors, 0u) << r.first_error;
  EXPECT_EQ(r.messages, 2000u);
  EXPECT_EQ(r.bytes, 2000u * 16384);
  ASSERT_EQ(r.per_qp.size(), 4u);
  std::uint64_t sum = 0;
  for (const auto& q : r.per_qp) {
    sum += q.messages;
    EXPECT_GT(q.messages, 300u);                          // round-robin keeps every QP busy
    EXPECT_GE(q.counters.packets_sent, q.messages * 16);  // 16 KiB at MTU 1024
  }
  EXPECT_EQ(sum, r.messages);
  EXPECT_GT(r.gbps, 0);
  EXPECT_NEAR(r.gbps, static_cast<double>(r.bytes) * 8 / r.seconds / 1e9, 1e-9);
  for (std::size_t i = 0; i < b.buffers.size(); ++i)
    EXPECT_EQ(static_cast<int>(b.buffers[i].data[16383]), static_cast<int>(i + 1));
}

// `--iterations 300 --qps 3` after a warm-up measures exactly 300 messages: the warm-up's still
// in flight when measuring starts are not among them (they used to be: 492).
TEST(BwWorkload, IterationsAfterAWarmUpAreExactlyThoseAskedFor) {
  Side a("127.0.0.1"), b("127.0.0.2");
  connect(a, b, 3, 65536);
  BwConfig config;
  config.message_bytes = 65536;
  config.iterations = 300;
  config.warmup_seconds = 0.2;
  const BwResult r = run_pair(a, b, config);
  EXPECT_EQ(r.errors, 0u) << r.first_error;
  EXPECT_EQ(r.messages, 300u);
  EXPECT_EQ(r.bytes, 300u * 65536);
  std::uint64_t sum = 0, completed = 0;
  for (const auto& q : r.per_qp) {
    sum += q.messages;
    completed += q.counters.packets_sent / 64;  // 64 KiB at MTU 1024
  }
  EXPECT_EQ(sum, 300u);
  EXPECT_GT(completed, 300u);  // the warm-up's messages were sent, and are not counted
  EXPECT_GT(r.seconds, 0);
}

// A suite's bytes: each QP sends exactly its volume, whatever the warm-up and seconds say, and
// the receiver's own count of arrived messages agrees.
TEST(BwWorkload, ByVolumeEveryQpSendsExactlyItsMessagesAllMeasured) {
  Side a("127.0.0.1"), b("127.0.0.2");
  connect(a, b, 3, 4096);
  BwConfig config;
  config.opcode = Opcode::send;
  config.message_bytes = 4096;
  config.messages_per_qp = 700;
  config.warmup_seconds = 5;  // unused by volume: all of it is measured
  config.seconds = 0.001;     // unused by volume: the run is as long as the volume takes
  std::uint64_t received = 0;
  const BwResult r = run_pair(a, b, config, &received);
  EXPECT_EQ(r.errors, 0u) << r.first_error;
  EXPECT_EQ(received, 3u * 700);
  ASSERT_EQ(r.per_qp.size(), 3u);
  for (const auto& q : r.per_qp) {
    EXPECT_EQ(q.messages, 700u);
    EXPECT_EQ(q.bytes, 700u * 4096);
  }
  EXPECT_EQ(r.bytes, 3u * 700 * 4096);
  EXPECT_GT(r.seconds, 0);
}

// The engine's pacer says how long it held the sender back: a loopback pair paced far below what
// it can move is held for some of its time; unpaced, never.
TEST(BwWorkload, ThePacerCountsTheTimeItHeldTheSenderBack) {
  Side a("127.0.0.1"), b("127.0.0.2");
  connect(a, b, 2, 65536);
  BwConfig config;
  config.message_bytes = 65536;
  config.seconds = 0.4;
  config.warmup_seconds = 0;
  config.rate_bps = 20e6;  // a 64 KiB message every 26 ms
  BwResult r = run_pair(a, b, config);
  EXPECT_EQ(r.errors, 0u) << r.first_error;
  EXPECT_GT(r.pacer_held_ns, 0u);
  EXPECT_LE(static_cast<double>(r.pacer_held_ns) / 1e9, r.seconds);
  EXPECT_LE(static_cast<double>(r.pacer_lost_ns) / 1e9, r.seconds);
  config.rate_bps = 0;
  r = run_pair(a, b, config);
  EXPECT_EQ(r.pacer_held_ns, 0u);
  EXPECT_EQ(r.pacer_lost_ns, 0u);
}

TEST(BwWorkload, SendConsumesTheReceivesServePosts) {
  Side a("127.0.0.1"), b("127.0.0.2");
  connect(a, b, 2, 4096);
  BwConfig config;
  config.opcode = Opcode::send;
  config.message_bytes = 4096;
  config.iterations = 1000;
  config.warmup_seconds = 0;
  std::uint64_t received = 0;
  const BwResult r = run_pair(a, b, config, &received);
  EXPECT_EQ(r.errors, 0u) << r.first_error;
  EXPECT_EQ(r.messages, 1000u);
  EXPECT_EQ(received, 1000u);
}

TEST(BwWorkload, DurationModeMeasuresAfterWarmup) {
  Side a("127.0.0.1"), b("127.0.0.2");
  connect(a, b, 1, 65536);
  BwConfig config;
  config.seconds = 0.3;
  config.warmup_seconds = 0.1;
  const BwResult r = run_pair(a, b, config);
  EXPECT_EQ(r.errors, 0u) << r.first_error;
  EXPECT_GT(r.messages, 0u);
  EXPECT_GT(r.seconds, 0.2);
  EXPECT_LT(r.seconds, 5.0);
  // Warm-up messages are excluded: fewer measured than the QP completed in all.
  EXPECT_LT(r.messages * 16, r.per_qp[0].counters.packets_sent);
}

TEST(BwWorkload, ABadKeyIsReportedNotHung) {
  Side a("127.0.0.1"), b("127.0.0.2");
  connect(a, b, 1, 4096);
  a.connections[0].rkey ^= 0xffff;
  BwConfig config;
  config.message_bytes = 4096;
  config.iterations = 100;
  config.warmup_seconds = 0;
  const BwResult r = run_pair(a, b, config);
  EXPECT_GE(r.errors, 1u);
  EXPECT_NE(r.first_error.find("remote_access_error"), std::string::npos) << r.first_error;
  EXPECT_EQ(r.first_error_status, WcStatus::remote_access_error);
}

// A link cut under the traffic, as the requester sees it: nothing it sends is answered.
TEST(BwWorkload, APeerThatNeverAnswersIsReportedAsRetryExceeded) {
  Side a("127.0.0.1");
  QpOptions o;
  o.retry_count = 2;
  o.ack_timeout_us = 2000;
  a.qps.push_back(a.provider->create_qp(*a.cq, o));
  a.buffers.push_back(a.provider->register_memory(4096));
  Endpoint nobody = a.qps[0]->local_endpoint();
  nobody.qpn = (a.qps[0]->qpn() + 0x1000) & 0xffffff;  // no QP has it: every packet is dropped
  a.qps[0]->connect(nobody);
  a.connections.push_back(
      {a.qps[0].get(), &a.buffers[0], a.buffers[0].remote_address, a.buffers[0].rkey});
  BwConfig config;
  config.message_bytes = 4096;
  config.iterations = 10;
  config.warmup_seconds = 0;
  const std::atomic<bool> stop{false};
  const BwResult r = run_bw_requester(*a.cq, a.connections, config, stop);
  EXPECT_GE(r.errors, 1u);
  ASSERT_EQ(r.first_error_status, WcStatus::retry_exceeded) << r.first_error;
  EXPECT_TRUE(caused_by_fabric(*r.first_error_status));
}

TEST(FaultClass, OnlyRetriesThatRanOutAreTheFabrics) {
  EXPECT_TRUE(caused_by_fabric(WcStatus::retry_exceeded));
  for (const WcStatus s :
       {WcStatus::success, WcStatus::local_length_error, WcStatus::local_protection_error,
        WcStatus::remote_access_error, WcStatus::remote_invalid_request, WcStatus::flushed,
        WcStatus::rnr_retry_exceeded})
    EXPECT_FALSE(caused_by_fabric(s)) << to_string(s);
}

TEST(FaultClass, StatusNamesReadBack) {
  for (const WcStatus s : {WcStatus::success, WcStatus::retry_exceeded, WcStatus::flushed,
                           WcStatus::rnr_retry_exceeded})
    EXPECT_EQ(wc_status_from_name(to_string(s)), s);
  EXPECT_EQ(wc_status_from_name("retry exceeded"), std::nullopt);
}

Completion failed(std::uint32_t qpn, WcStatus status) {
  Completion c;
  c.qpn = qpn;
  c.status = status;
  return c;
}

TEST(FaultClass, AFlushGivesWayToTheFailureThatCausedIt) {
  std::uint64_t errors = 0;
  std::string first;
  std::optional<WcStatus> status;
  note_failure(failed(0x11, WcStatus::flushed), errors, first, status);
  note_failure(failed(0x12, WcStatus::retry_exceeded), errors, first, status);
  note_failure(failed(0x13, WcStatus::local_protection_error), errors, first, status);
  EXPECT_EQ(errors, 3u);
  EXPECT_EQ(status, WcStatus::retry_exceeded);
  EXPECT_EQ(first, "QP 0x12: retry_exceeded");
}

TEST(FaultClass, TheFirstCauseStays) {
  std::uint64_t errors = 0;
  std::string first;
  std::optional<WcStatus> status;
  note_failure(failed(0x11, WcStatus::local_protection_error), errors, first, status);
  note_failure(failed(0x12, WcStatus::retry_exceeded), errors, first, status);
  EXPECT_EQ(status, WcStatus::local_protection_error);
  EXPECT_EQ(first, "QP 0x11: local_protection_error");
}

TEST(FaultClass, AnErrorThatWasNoCompletionHasNoStatus) {
  std::uint64_t errors = 1;  // a post refused, say
  std::string first = "cannot post a receive";
  std::optional<WcStatus> status;
  note_failure(failed(0x12, WcStatus::retry_exceeded), errors, first, status);
  EXPECT_EQ(status, std::nullopt);
  EXPECT_EQ(first, "cannot post a receive");
}

// A CQ that breaks after `good` completions, as a verbs CQ does when ibv_poll_cq returns a
// negative value (an overrun, a device error): a fault the soft provider cannot have, so this
// wraps its CQ.
class BreakingCq final : public CompletionQueue {
 public:
  BreakingCq(CompletionQueue& inner, std::size_t good) : inner_(inner), left_(good) {}
  std::size_t poll(std::span<Completion> out) override {
    if (!failure_.empty()) return 0;
    const std::size_t n = inner_.poll(out.first(std::min(out.size(), left_)));
    left_ -= n;
    if (left_ == 0)
      failure_ =
          "mlx5_0: completion queue of 8192 entries failed: ibv_poll_cq "
          "returned -5";
    return n;
  }
  const std::string& failure() const noexcept override { return failure_; }

 private:
  CompletionQueue& inner_;
  std::size_t left_;
  std::string failure_;
};

// Runs `peer` on a thread while `run` runs here, then stops the peer; returns what `run` did.
template <class Peer, class Run>
auto beside_peer(Peer peer, Run run) {
  std::atomic<bool> stop{false};
  std::thread responder([&] { peer(stop); });
  auto result = run(stop);
  stop = true;
  responder.join();
  return result;
}

TEST(BwWorkload, ACqThatFailsEndsTheRunWithItsError) {
  Side a("127.0.0.1"), b("127.0.0.2");
  connect(a, b, 1, 4096);
  BreakingCq breaking(*a.cq, 10);
  BwConfig config;
  config.message_bytes = 4096;
  config.iterations = 1000;
  config.warmup_seconds = 0;
  const BwResult r =
      beside_peer([&](std::atomic<bool>& stop) { serve(*b.cq, b.connections, config, stop); },
                  [&](std::atomic<bool>& stop) {
                    return run_bw_requester(breaking, a.connections, config, stop);
                  });
  EXPECT_EQ(r.errors, 1u);
  EXPECT_EQ(r.first_error,
            "mlx5_0: completion queue of 8192 entries failed: ibv_poll_cq returned -5");
  EXPECT_LE(r.messages, 10u);
}

// A CQ that goes silent after `good` completions, with no error: a NIC retrying for ever toward a
// peer whose link went down (rxe at retry_cnt 7 does), a fault soft cannot have.
class SilentCq final : public CompletionQueue {
 public:
  SilentCq(CompletionQueue& inner, std::size_t good) : inner_(inner), left_(good) {}
  std::size_t poll(std::span<Completion> out) override {
    const std::size_t n = inner_.poll(out.first(std::min(out.size(), left_)));
    left_ -= n;
    return n;
  }

 private:
  CompletionQueue& inner_;
  std::size_t left_;
};

TEST(BwWorkload, RequestsThatNeverCompleteAreAnErrorAndTheStallCountsInTheRate) {
  Side a("127.0.0.1"), b("127.0.0.2");
  connect(a, b, 1, 4096);
  SilentCq silent(*a.cq, 50);
  BwConfig config;
  config.message_bytes = 4096;
  config.seconds = 1;
  config.warmup_seconds = 0;
  config.lost_after_seconds = 0.3;
  const BwResult r =
      beside_peer([&](std::atomic<bool>& stop) { serve(*b.cq, b.connections, config, stop); },
                  [&](std::atomic<bool>& stop) {
                    return run_bw_requester(silent, a.connections, config, stop);
                  });
  EXPECT_EQ(r.errors, 1u);
  EXPECT_NE(r.first_error.find("requests got no completion"), std::string::npos) << r.first_error;
  EXPECT_LE(r.messages, 50u);
  // Measured over the second asked for, not up to the last of the 50 completions.
  EXPECT_GE(r.seconds, 0.99);
}

TEST(LatWorkload, ACqThatFailsEndsThePingPongWithItsError) {
  Side a("127.0.0.1"), b("127.0.0.2");
  connect(a, b, 1, 64);
  BreakingCq breaking(*a.cq, 20);
  LatConfig config;
  config.message_bytes = 64;
  config.iterations = 2000;
  config.warmup_iterations = 0;
  const LatResult r = beside_peer(
      [&](std::atomic<bool>& stop) { run_lat(*b.cq, b.connections[0], config, false, stop); },
      [&](std::atomic<bool>& stop) {
        return run_lat(breaking, a.connections[0], config, true, stop);
      });
  EXPECT_EQ(r.errors, 1u);
  EXPECT_NE(r.first_error.find("ibv_poll_cq returned -5"), std::string::npos) << r.first_error;
  EXPECT_LT(r.one_way.count(), 2000u);
}

TEST(LatWorkload, PingPongRecordsEveryIteration) {
  Side a("127.0.0.1"), b("127.0.0.2");
  connect(a, b, 1, 64);
  LatConfig config;
  config.message_bytes = 64;
  config.iterations = 2000;
  config.warmup_iterations = 50;
  std::atomic<bool> stop{false};
  LatResult answered;
  std::thread responder([&] { answered = run_lat(*b.cq, b.connections[0], config, false, stop); });
  const LatResult r = run_lat(*a.cq, a.connections[0], config, true, stop);
  responder.join();
  EXPECT_EQ(r.errors, 0u) << r.first_error;
  EXPECT_EQ(answered.errors, 0u) << answered.first_error;
  EXPECT_EQ(r.one_way.count(), 2000u);
  EXPECT_GT(r.one_way.min(), 0u);
  EXPECT_LE(r.one_way.min(), r.one_way.percentile(0.5));
  EXPECT_LE(r.one_way.percentile(0.5), r.one_way.percentile(0.99));
  EXPECT_LE(r.one_way.percentile(0.99), r.one_way.max());
}

// A responder whose start comes later than the initiator's (clocks apart, an emulated host)
// answers from the receive posted at connect. On verbs (rxe in a QEMU guest) the first ping
// would otherwise be RNR-NAKed until rnr_retry ran out (errors: 2, "remote_invalid_request");
// soft waits for a receive, so the guests' system test is where that failure shows.
TEST(LatWorkload, AReceivePostedAtConnectCarriesALateResponder) {
  Side a("127.0.0.1"), b("127.0.0.2");
  connect(a, b, 1, 64);
  LatConfig config;
  config.message_bytes = 64;
  config.iterations = 50;
  config.warmup_iterations = 5;
  ASSERT_EQ(post_lat_receive(b.connections[0], 64), PostResult::ok);
  ASSERT_EQ(post_lat_receive(a.connections[0], 64), PostResult::ok);
  config.receive_posted = true;
  std::atomic<bool> stop{false};
  LatResult answered;
  std::thread responder([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    answered = run_lat(*b.cq, b.connections[0], config, false, stop);
  });
  const LatResult r = run_lat(*a.cq, a.connections[0], config, true, stop);
  responder.join();
  EXPECT_EQ(r.errors, 0u) << r.first_error;
  EXPECT_EQ(answered.errors, 0u) << answered.first_error;
  EXPECT_EQ(r.one_way.count(), 50u);
}

}  // namespace
}  // namespace rocehil::traffic
