// The soft provider over loopback: two RC QPs of one provider talk to each other through the
// kernel's UDP stack, so every packet is encoded, sent, received, ICRC-checked and decoded.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <random>
#include <thread>
#include <vector>

#include "rocehil/common/error.hpp"
#include "rocehil/traffic/provider.hpp"

namespace rocehil::traffic {
namespace {

class SoftLoopback : public ::testing::Test {
 protected:
  void SetUp() override { start_provider(); }

  // A provider with `settings` (soft_settings.hpp); the one before, its QPs and CQ gone first
  // (it holds the RoCEv2 port).
  void start_provider(std::vector<SoftSetting> settings = {}, double port_gbps = 0) {
    a.reset();
    b.reset();
    cq.reset();
    provider.reset();
    ProviderOptions o;
    o.address = "127.0.0.1";
    o.soft_settings = std::move(settings);
    o.port_gbps = port_gbps;
    provider = make_provider("soft", o);
    cq = provider->create_cq(1024);
  }

  // A WRITE of `bytes` from the start of `src` to `dst` at `offset`.
  static SendRequest write_of(const MemoryRegion& src, const MemoryRegion& dst, std::uint32_t bytes,
                              std::uint64_t wr_id = 1, std::uint64_t offset = 0) {
    return {.wr_id = wr_id,
            .opcode = Opcode::write,
            .local = &src,
            .length = bytes,
            .remote_address = dst.remote_address + offset,
            .rkey = dst.rkey};
  }

  // One WRITE of `bytes` from a to b whose packets leave marked CE (the ECN bits of the TOS), as
  // if a switch had marked them; true once it completed.
  bool write_ce_marked(std::uint32_t bytes) {
    QpOptions o;
    o.traffic_class = (26 << 2) | 0x3;
    connect_pair(o);
    const MemoryRegion src = provider->register_memory(bytes);
    const MemoryRegion dst = provider->register_memory(bytes);
    const SendRequest wr = write_of(src, dst, bytes);
    return a->post_send({&wr, 1}) == PostResult::ok && wait_for(1).size() == 1;
  }

  void connect_pair(QpOptions options = {}) {
    a = provider->create_qp(*cq, options);
    b = provider->create_qp(*cq, options);
    a->connect(b->local_endpoint());
    b->connect(a->local_endpoint());
  }

  // Polls until `n` completions arrived or two seconds passed.
  std::vector<Completion> wait_for(std::size_t n) {
    std::vector<Completion> got;
    std::array<Completion, 32> batch{};
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (got.size() < n && std::chrono::steady_clock::now() < deadline) {
      const std::size_t k = cq->poll(batch);
      got.insert(got.end(), batch.begin(), batch.begin() + static_cast<std::ptrdiff_t>(k));
    }
    return got;
  }

  static void fill_random(const MemoryRegion& mr, unsigned seed) {
    std::mt19937 random(seed);
    for (std::uint64_t i = 0; i < mr.length; ++i) mr.data[i] = static_cast<std::byte>(random());
  }

  std::unique_ptr<Provider> provider;
  std::unique_ptr<CompletionQueue> cq;
  std::unique_ptr<QueuePair> a, b;
};

TEST_F(SoftLoopback, MultiPacketWriteArrivesIntact) {
  connect_pair();
  const std::size_t bytes = 1 << 20;
  const MemoryRegion src = provider->register_memory(bytes);
  const MemoryRegion dst = provider->register_memory(bytes);
  fill_random(src, 1);
  SendRequest wr{.wr_id = 7,
                 .opcode = Opcode::write,
                 .local = &src,
                 .length = bytes,
                 .remote_address = dst.remote_address,
                 .rkey = dst.rkey};
  ASSERT_EQ(a->post_send({&wr, 1}), PostResult::ok);
  const auto done = wait_for(1);
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(done[0].wr_id, 7u);
  EXPECT_EQ(done[0].status, WcStatus::success);
  EXPECT_EQ(std::memcmp(src.data, dst.data, bytes), 0);
  // 1 MiB at MTU 1024 is 1024 request packets; the responder answers with coalesced ACKs.
  EXPECT_GE(a->counters().packets_sent, 1024u);
  EXPECT_EQ(b->counters().out_of_sequence, 0u);
  EXPECT_LT(b->counters().packets_sent, 1024u / 8);
}

TEST_F(SoftLoopback, SendAndWriteWithImmediateConsumeReceives) {
  connect_pair();
  const MemoryRegion src = provider->register_memory(8192);
  const MemoryRegion dst = provider->register_memory(8192);
  fill_random(src, 2);
  RecvRequest recvs[2] = {{.wr_id = 100, .local = &dst, .local_offset = 0, .length = 4096},
                          {.wr_id = 101, .local = &dst, .local_offset = 4096, .length = 4096}};
  ASSERT_EQ(b->post_recv(recvs), PostResult::ok);
  SendRequest wrs[2] = {
      {.wr_id = 1, .opcode = Opcode::send_with_imm, .local = &src, .length = 3000, .imm = 0xabcd},
      {.wr_id = 2,
       .opcode = Opcode::write_with_imm,
       .local = &src,
       .local_offset = 4096,
       .length = 2500,
       .remote_address = dst.remote_address + 4096,
       .rkey = dst.rkey,
       .imm = 0x1234}};
  ASSERT_EQ(a->post_send(wrs), PostResult::ok);
  auto done = wait_for(4);
  ASSERT_EQ(done.size(), 4u);
  std::sort(done.begin(), done.end(),
            [](const Completion& x, const Completion& y) { return x.wr_id < y.wr_id; });
  EXPECT_EQ(done[0].status, WcStatus::success);
  EXPECT_EQ(done[1].status, WcStatus::success);
  EXPECT_EQ(done[2].opcode, Opcode::recv);
  EXPECT_EQ(done[2].byte_len, 3000u);
  EXPECT_TRUE(done[2].has_imm);
  EXPECT_EQ(done[2].imm, 0xabcdu);
  EXPECT_EQ(done[3].byte_len, 2500u);
  EXPECT_EQ(done[3].imm, 0x1234u);
  EXPECT_EQ(std::memcmp(src.data, dst.data, 3000), 0);
  EXPECT_EQ(std::memcmp(src.data + 4096, dst.data + 4096, 2500), 0);
}

TEST_F(SoftLoopback, ReadFetchesRemoteMemory) {
  connect_pair();
  const MemoryRegion remote = provider->register_memory(65536 + 100);
  const MemoryRegion local = provider->register_memory(65536 + 100);
  fill_random(remote, 3);
  SendRequest wr{.wr_id = 9,
                 .opcode = Opcode::read,
                 .local = &local,
                 .length = 65536 + 100,
                 .remote_address = remote.remote_address,
                 .rkey = remote.rkey};
  ASSERT_EQ(a->post_send({&wr, 1}), PostResult::ok);
  const auto done = wait_for(1);
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(done[0].status, WcStatus::success);
  EXPECT_EQ(done[0].opcode, Opcode::read);
  EXPECT_EQ(std::memcmp(remote.data, local.data, 65536 + 100), 0);
}

TEST_F(SoftLoopback, AnIdleSpellDoesNotFireTheAckTimerOnTheNextMessage) {
  // The timer runs from the first packet of a flight, not from the last progress before an
  // idle spell longer than the timeout (that fired a spurious go-back-N on every new burst).
  connect_pair({.ack_timeout_us = 2000});
  const MemoryRegion src = provider->register_memory(4096);
  const MemoryRegion dst = provider->register_memory(4096);
  for (int round = 0; round < 5; ++round) {
    SendRequest wr{.wr_id = static_cast<std::uint64_t>(round),
                   .opcode = round % 2 == 0 ? Opcode::write : Opcode::read,
                   .local = &src,
                   .length = 4096,
                   .remote_address = dst.remote_address,
                   .rkey = dst.rkey};
    ASSERT_EQ(a->post_send({&wr, 1}), PostResult::ok);
    const auto done = wait_for(1);
    ASSERT_EQ(done.size(), 1u);
    EXPECT_EQ(done[0].status, WcStatus::success);
    std::this_thread::sleep_for(std::chrono::milliseconds(5));  // idle: 2.5 timeouts long
  }
  EXPECT_EQ(a->counters().timeouts, 0u);
  EXPECT_EQ(a->counters().retransmitted_packets, 0u);
}

TEST_F(SoftLoopback, ManyMessagesCompleteInOrder) {
  connect_pair();
  const MemoryRegion src = provider->register_memory(1 << 16);
  const MemoryRegion dst = provider->register_memory(1 << 16);
  fill_random(src, 4);
  std::vector<std::uint64_t> order;
  for (int round = 0; round < 50; ++round) {
    std::array<SendRequest, 16> wrs{};
    for (std::size_t i = 0; i < wrs.size(); ++i)
      wrs[i] = {.wr_id = round * 16 + i,
                .opcode = i % 3 == 0 ? Opcode::read : Opcode::write,
                .local = &src,
                .local_offset = i * 4096,
                .length = 4096,
                .remote_address = dst.remote_address + i * 4096,
                .rkey = dst.rkey};
    ASSERT_EQ(a->post_send(wrs), PostResult::ok);
    for (const auto& c : wait_for(16)) {
      EXPECT_EQ(c.status, WcStatus::success);
      order.push_back(c.wr_id);
    }
  }
  ASSERT_EQ(order.size(), 800u);
  EXPECT_TRUE(std::is_sorted(order.begin(), order.end()));
}

TEST_F(SoftLoopback, BadRkeyIsARemoteAccessErrorAndFlushesTheRest) {
  connect_pair();
  const MemoryRegion src = provider->register_memory(4096);
  const MemoryRegion dst = provider->register_memory(4096);
  SendRequest wrs[3] = {{.wr_id = 1,
                         .opcode = Opcode::write,
                         .local = &src,
                         .length = 100,
                         .remote_address = dst.remote_address,
                         .rkey = dst.rkey ^ 0x5a5a},
                        {.wr_id = 2,
                         .opcode = Opcode::write,
                         .local = &src,
                         .length = 100,
                         .remote_address = dst.remote_address,
                         .rkey = dst.rkey},
                        {.wr_id = 3,
                         .opcode = Opcode::write,
                         .local = &src,
                         .length = 100,
                         .remote_address = dst.remote_address,
                         .rkey = dst.rkey}};
  ASSERT_EQ(a->post_send(wrs), PostResult::ok);
  const auto done = wait_for(3);
  ASSERT_EQ(done.size(), 3u);
  EXPECT_EQ(done[0].wr_id, 1u);
  EXPECT_EQ(done[0].status, WcStatus::remote_access_error);
  EXPECT_EQ(done[1].status, WcStatus::flushed);
  EXPECT_EQ(done[2].status, WcStatus::flushed);
  EXPECT_EQ(b->counters().naks_sent, 1u);
  EXPECT_EQ(a->counters().naks_received, 1u);
  EXPECT_EQ(a->post_send({wrs, 1}), PostResult::invalid);  // the QP is in the error state
}

TEST_F(SoftLoopback, WriteOutsideTheRegionIsARemoteAccessError) {
  connect_pair();
  const MemoryRegion src = provider->register_memory(8192);
  const MemoryRegion dst = provider->register_memory(4096);
  SendRequest wr{.wr_id = 1,
                 .opcode = Opcode::write,
                 .local = &src,
                 .length = 4097,
                 .remote_address = dst.remote_address,
                 .rkey = dst.rkey};
  ASSERT_EQ(a->post_send({&wr, 1}), PostResult::ok);
  const auto done = wait_for(1);
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(done[0].status, WcStatus::remote_access_error);
}

TEST_F(SoftLoopback, ReceiveTooSmallFailsBothSides) {
  connect_pair();
  const MemoryRegion src = provider->register_memory(4096);
  const MemoryRegion dst = provider->register_memory(4096);
  RecvRequest recv{.wr_id = 50, .local = &dst, .length = 100};
  ASSERT_EQ(b->post_recv({&recv, 1}), PostResult::ok);
  SendRequest wr{.wr_id = 1, .opcode = Opcode::send, .local = &src, .length = 200};
  ASSERT_EQ(a->post_send({&wr, 1}), PostResult::ok);
  auto done = wait_for(2);
  ASSERT_EQ(done.size(), 2u);
  std::sort(done.begin(), done.end(),
            [](const Completion& x, const Completion& y) { return x.wr_id < y.wr_id; });
  EXPECT_EQ(done[0].status, WcStatus::remote_invalid_request);
  EXPECT_EQ(done[1].status, WcStatus::local_length_error);
}

TEST_F(SoftLoopback, NoResponderRunsOutOfRetries) {
  QpOptions o;
  o.retry_count = 2;
  o.ack_timeout_us = 2000;
  a = provider->create_qp(*cq, o);
  Endpoint nobody = a->local_endpoint();
  nobody.qpn = (a->qpn() + 0x1000) & 0xffffff;  // no QP has it: every packet is dropped
  a->connect(nobody);
  const MemoryRegion src = provider->register_memory(4096);
  SendRequest wr{.wr_id = 1,
                 .opcode = Opcode::write,
                 .local = &src,
                 .length = 4096,
                 .remote_address = src.remote_address,
                 .rkey = src.rkey};
  ASSERT_EQ(a->post_send({&wr, 1}), PostResult::ok);
  const auto done = wait_for(1);
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(done[0].status, WcStatus::retry_exceeded);
  const QpCounters c = a->counters();
  EXPECT_EQ(c.timeouts, 3u);  // the first try, then two retries
  EXPECT_EQ(c.retransmitted_packets, 2u * 4u);
  EXPECT_EQ(c.packets_sent, 3u * 4u);
}

TEST_F(SoftLoopback, CongestionExperiencedBringsCnpsAndARateCut) {
  // The responder must notify and the requester must slow down.
  ASSERT_TRUE(write_ce_marked(1 << 18));
  const QpCounters responder = b->counters(), requester = a->counters();
  EXPECT_GE(responder.ce_received, 256u);
  EXPECT_GE(responder.cnps_sent, 1u);
  EXPECT_LE(responder.cnps_sent, responder.ce_received);
  EXPECT_EQ(requester.cnps_handled, responder.cnps_sent);
  // The cut is counted; the current rate is a snapshot that DCQCN's timers raise back to line
  // rate (0: not limited) when the counters are read late, as on a loaded machine (1 run in 7
  // read 0 here beside a compiler).
  EXPECT_GE(requester.rate_cuts, 1u);
  EXPECT_GE(requester.rate_gbps, 0.0);
  EXPECT_LT(requester.rate_gbps, 100.0);
}

// DCQCN by priority, as ecn/roce_np/enable/P and ecn/roce_rp/enable/P: the CE-marked WRITE is on
// DSCP 26, priority 3.
TEST_F(SoftLoopback, ANotificationPointOffForThePrioritySendsNoCnp) {
  start_provider({{"roce_np.enable", 0xff & ~(1 << 3)}});
  ASSERT_TRUE(write_ce_marked(1 << 18));
  EXPECT_GE(b->counters().ce_received, 256u);
  EXPECT_EQ(b->counters().cnps_sent, 0u);
  EXPECT_EQ(a->counters().rate_cuts, 0u);
}

TEST_F(SoftLoopback, AReactionPointOffForThePriorityIgnoresCnps) {
  start_provider({{"roce_rp.enable", 1 << 4}});
  ASSERT_TRUE(write_ce_marked(1 << 18));
  EXPECT_GE(b->counters().cnps_sent, 1u);
  EXPECT_EQ(a->counters().cnps_handled, 0u);
  EXPECT_EQ(a->counters().rate_cuts, 0u);
}

// With the port's speed known, DCQCN starts there: the first cut leaves the QP below the port's
// speed, not at half of 100 Gb/s.
TEST_F(SoftLoopback, DcqcnCutsFromThePortSpeed) {
  start_provider({}, 0.5);
  ASSERT_TRUE(write_ce_marked(1 << 18));
  const QpCounters requester = a->counters();
  EXPECT_GE(requester.rate_cuts, 1u);
  EXPECT_LT(requester.rate_gbps, 0.5);  // cut below the port, or released back to it (0)
}

// The port paces every QP of the provider together: two QPs writing at once take at least as
// long as their bytes need at the port's speed. (A lower bound only: pacing can make a transfer
// slower than the port, never faster, so a loaded machine cannot fail this.)
TEST_F(SoftLoopback, APortSpeedPacesAllQpsTogether) {
  constexpr double port_gbps = 0.5;
  start_provider({}, port_gbps);
  connect_pair();
  auto c = provider->create_qp(*cq, {});
  auto d = provider->create_qp(*cq, {});
  c->connect(d->local_endpoint());
  d->connect(c->local_endpoint());
  constexpr std::uint32_t bytes = 1 << 20;
  const MemoryRegion src = provider->register_memory(bytes);
  const MemoryRegion dst = provider->register_memory(2 * bytes);
  const SendRequest first = write_of(src, dst, bytes, 1);
  const SendRequest second = write_of(src, dst, bytes, 2, bytes);
  const auto started = std::chrono::steady_clock::now();
  ASSERT_EQ(a->post_send({&first, 1}), PostResult::ok);
  ASSERT_EQ(c->post_send({&second, 1}), PostResult::ok);
  ASSERT_EQ(wait_for(2).size(), 2u);
  const double elapsed_ns =
      std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - started).count();
  // The requests' datagrams with their Ethernet, IPv4 and UDP headers, less the credit an idle
  // port lends (two 4 KiB-MTU packets: 134.4 us at this speed) and the last packet, whose time
  // at the port need not be over when the completion arrives.
  const std::uint64_t on_wire = a->counters().bytes_sent + a->counters().packets_sent * 42 +
                                c->counters().bytes_sent + c->counters().packets_sent * 42;
  const double last_packet_ns = (1024 + 28 + 42) * 8 / port_gbps;
  const double credit_ns = 2 * 4200 * 8 / port_gbps;
  EXPECT_GE(elapsed_ns, static_cast<double>(on_wire) * 8 / port_gbps - credit_ns - last_packet_ns);
  EXPECT_GE(on_wire, 2u * bytes);
}

// A QP's rate limit paces its packets: 2 MB at 200 Mbit/s takes at least 80 ms (a lower bound
// only: pacing can make a transfer slower than its rate, never faster). Lifted, the same write
// is not held to it.
TEST_F(SoftLoopback, ARateLimitPacesTheQpsPackets) {
  connect_pair();
  constexpr std::uint32_t bytes = 2 << 20;
  const MemoryRegion src = provider->register_memory(bytes);
  const MemoryRegion dst = provider->register_memory(bytes);
  EXPECT_EQ(a->limit_rate(200e6), "");
  const SendRequest wr = write_of(src, dst, bytes);
  const auto start = std::chrono::steady_clock::now();
  ASSERT_EQ(a->post_send({&wr, 1}), PostResult::ok);
  ASSERT_EQ(wait_for(1).size(), 1u);
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(80));
  EXPECT_NE(a->limit_rate(-1).find("not a rate"), std::string::npos);
  EXPECT_NE(a->limit_rate(10).find("below"), std::string::npos);
  EXPECT_EQ(a->limit_rate(0), "");
}

TEST_F(SoftLoopback, APortSpeedThatIsNoSpeedIsRefused) {
  for (const double bad : {-1.0, std::nan("")}) {
    ProviderOptions o;
    o.address = "127.0.0.1";
    o.port_gbps = bad;
    a.reset();
    b.reset();
    cq.reset();
    provider.reset();
    try {
      make_provider("soft", o);
      ADD_FAILURE() << "port speed " << bad << " was taken";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("is not a speed"), std::string::npos) << e.what();
    }
  }
}

// The CNP interval given by name: every CE mark answered at 0, one CNP for the whole transfer at
// ten seconds.
TEST_F(SoftLoopback, TheCnpIntervalIsTheOneGivenByName) {
  for (const std::int64_t interval_us : {std::int64_t{0}, std::int64_t{10'000'000}}) {
    start_provider({{"roce_np.min_time_between_cnps", interval_us}});
    ASSERT_TRUE(write_ce_marked(1 << 17));
    const QpCounters responder = b->counters();
    ASSERT_GE(responder.ce_received, 128u);
    if (interval_us == 0)
      EXPECT_EQ(responder.cnps_sent, responder.ce_received);
    else
      EXPECT_EQ(responder.cnps_sent, 1u);
  }
}

TEST(SoftSettingsOnTheWire, VerbsTakesNone) {
  ProviderOptions po;
  po.soft_settings = {{"roce_rp.rpg_gd", 9}};
  try {
    make_provider("verbs", po);
    ADD_FAILURE() << "accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("roce_rp.rpg_gd"), std::string::npos) << e.what();
  }
}

TEST_F(SoftLoopback, AServiceLevelIsRefusedForThereIsNoVlanToCarryIt) {
  QpOptions o;
  o.sl = 3;
  try {
    a = provider->create_qp(*cq, o);
    ADD_FAILURE() << "created";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("sl 3: the soft provider sends untagged UDP"),
              std::string::npos)
        << e.what();
  }
  o.sl = 0;
  EXPECT_NO_THROW(a = provider->create_qp(*cq, o));
}

TEST_F(SoftLoopback, PostingChecksItsArguments) {
  QpOptions o;
  o.max_send_wr = 2;
  a = provider->create_qp(*cq, o);
  const MemoryRegion src = provider->register_memory(4096);
  SendRequest wr{.opcode = Opcode::write, .local = &src, .length = 10};
  EXPECT_EQ(a->post_send({&wr, 1}), PostResult::not_connected);
  a->connect(a->local_endpoint());
  SendRequest too_long{.opcode = Opcode::write, .local = &src, .length = 4097};
  EXPECT_EQ(a->post_send({&too_long, 1}), PostResult::invalid);
  SendRequest three[3] = {wr, wr, wr};
  EXPECT_EQ(a->post_send(three), PostResult::queue_full);
  o.mtu = 1000;
  EXPECT_THROW(provider->create_qp(*cq, o), Error);
  EXPECT_THROW(make_provider("nosuch", {}), Error);
}

TEST_F(SoftLoopback, HasNoGpuMemoryAndCopiesHostRegions) {
  try {
    provider->register_gpu_memory(0, 4096);
    ADD_FAILURE() << "soft registered GPU memory";
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), ExitCode::bad_input);
    EXPECT_NE(std::string(e.what()).find("the soft provider has no GPU memory"), std::string::npos)
        << e.what();
  }
  const MemoryRegion region = provider->register_memory(64);
  std::vector<std::byte> in(16), out(16);
  for (std::size_t i = 0; i < in.size(); ++i) in[i] = std::byte(i + 1);
  provider->write_region(region, 48, in);
  provider->read_region(region, 48, out);
  EXPECT_EQ(in, out);
  EXPECT_EQ(region.data[48], std::byte{1});
  EXPECT_THROW(provider->write_region(region, 49, in), Error);  // one byte past the end
  EXPECT_THROW(provider->create_cq(max_cq_depth + 1), Error);   // more than a ConnectX CQ holds
  provider->deregister_memory(region);
}

}  // namespace
}  // namespace rocehil::traffic
