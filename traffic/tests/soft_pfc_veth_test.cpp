// The soft NIC obeys PFC (root, label system): a sender's address on one end of a veth pair,
// real 802.1Qbb and 802.3x frames sent into that end from the other with an AF_PACKET socket
// (capture's injector, what `rocehil inject pfc` runs), and a bw sender with one QP on
// priority 3 (DSCP 26) and one on priority 0 (DSCP 0). The QPs' own traffic goes to a receiver
// on the pair's other address (through the kernel's local route); only the pause frames cross
// the veth, which is where the sender's NIC receives them.
//
// No assertion on how long anything takes: the port runs at 20 Mbit/s, so a frame of 0xffff
// quanta holds a priority 1.68 s, and the checks keep well inside that (a priority sends no byte
// up to 1 s after the frame left) or outside it (it sends again, by itself, once it ends).
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "rocehil/capture/pause_injector.hpp"
#include "rocehil/traffic/provider.hpp"

namespace rocehil::traffic {
namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

constexpr double port_gbps = 0.02;
constexpr std::uint32_t message_bytes = 4096;
constexpr std::uint32_t outstanding_per_qp = 8;

class SoftPfc : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "needs root to make a veth pair and send pause frames";
    a_ = "rhpf" + std::to_string(getpid()) + "a";
    b_ = "rhpf" + std::to_string(getpid()) + "b";
    const std::string sender = "198.18.253." + std::to_string(1 + getpid() % 120);
    const std::string receiver = "198.18.253." + std::to_string(130 + getpid() % 120);
    for (const std::string& command :
         {"ip link add " + a_ + " type veth peer name " + b_,
          "ip addr add " + sender + "/32 dev " + a_, "ip addr add " + receiver + "/32 dev " + b_,
          "ip link set " + a_ + " up", "ip link set " + b_ + " up"})
      ASSERT_EQ(std::system(command.c_str()), 0) << command;
    ProviderOptions sending;
    sending.address = sender;
    sending.port_gbps = port_gbps;
    sender_ = make_provider("soft", sending);
    ProviderOptions receiving;
    receiving.address = receiver;
    receiver_ = make_provider("soft", receiving);
    sender_cq_ = sender_->create_cq(256);
    receiver_cq_ = receiver_->create_cq(256);
    for (const unsigned dscp : {26u, 0u}) {
      QpOptions options;
      options.traffic_class = static_cast<std::uint8_t>(dscp << 2);
      options.max_send_wr = 16;
      Flow f;
      f.qp = sender_->create_qp(*sender_cq_, options);
      f.peer = receiver_->create_qp(*receiver_cq_, options);
      f.source = sender_->register_memory(message_bytes);
      f.target = receiver_->register_memory(message_bytes);
      f.qp->connect(f.peer->local_endpoint());
      f.peer->connect(f.qp->local_endpoint());
      flows_.push_back(std::move(f));
    }
  }
  void TearDown() override {
    flows_.clear();
    sender_cq_.reset();
    receiver_cq_.reset();
    sender_.reset();
    receiver_.reset();
    if (!a_.empty()) std::system(("ip link del " + a_ + " 2>/dev/null").c_str());
  }

  struct Flow {
    std::unique_ptr<QueuePair> qp, peer;
    MemoryRegion source, target;
    std::uint32_t in_flight = 0;
  };

  // One round of the bw sender: completions in, the windows refilled, the receiver driven.
  void pump() {
    std::array<Completion, 32> done{};
    const std::size_t n = sender_cq_->poll(done);
    for (std::size_t i = 0; i < n; ++i) {
      if (done[i].status != WcStatus::success) ++failures_;
      for (Flow& f : flows_)
        if (f.qp->qpn() == done[i].qpn) --f.in_flight;
    }
    receiver_cq_->poll(done);
    for (Flow& f : flows_)
      while (f.in_flight < outstanding_per_qp) {
        SendRequest wr;
        wr.wr_id = f.in_flight;
        wr.opcode = Opcode::write;
        wr.local = &f.source;
        wr.length = message_bytes;
        wr.remote_address = f.target.remote_address;
        wr.rkey = f.target.rkey;
        if (f.qp->post_send({&wr, 1}) != PostResult::ok) break;
        ++f.in_flight;
      }
  }
  // Pumps until `done` or `at_most` passes; returns whether `done` came true.
  bool pump_until(const std::function<bool()>& done, Clock::duration at_most) {
    const auto deadline = Clock::now() + at_most;
    while (Clock::now() < deadline) {
      pump();
      if (done()) return true;
    }
    return false;
  }
  void pump_until_time(Clock::time_point until) {
    while (Clock::now() < until) pump();
  }

  std::uint64_t sent(std::size_t flow) const { return flows_[flow].qp->counters().bytes_sent; }
  std::uint64_t counter(const Provider& p, const std::string& name) const {
    const auto all = p.nic_counters();
    const auto it = all.find(name);
    return it == all.end() ? ~std::uint64_t{0} : it->second;
  }
  std::uint64_t counter(const std::string& name) const { return counter(*sender_, name); }

  // One frame into the sender's netdev; returns when it left.
  Clock::time_point send_frame(bool link_pause, std::vector<unsigned> priorities,
                               std::uint16_t quanta) {
    capture::InjectOptions o;
    o.iface = b_;
    o.pause_8023x = link_pause;
    o.priorities = std::move(priorities);
    o.quanta = quanta;
    o.count = 1;
    const auto before = Clock::now();
    const std::atomic<bool> stop{false};
    EXPECT_EQ(capture::inject_pause_frames(o, stop).frames_sent, 1u);
    return before;
  }

  std::string a_, b_;
  std::unique_ptr<Provider> sender_, receiver_;
  std::unique_ptr<CompletionQueue> sender_cq_, receiver_cq_;
  std::vector<Flow> flows_;  // [0]: priority 3, [1]: priority 0
  int failures_ = 0;
};

TEST_F(SoftPfc, APausedPrioritySendsNothingWhileTheOtherSends) {
  const auto test_began = Clock::now();
  ASSERT_EQ(counter("rx_prio3_pause"), 0u) << "the sender has no pause socket";
  ASSERT_EQ(counter("rx_prio3_pause_duration"), 0u);
  EXPECT_FALSE(sender_->nic_counters().contains("tx_prio3_pause"));  // it never sends PFC
  ASSERT_TRUE(pump_until([&] { return sent(0) > 100'000 && sent(1) > 100'000; }, 10s));

  // XOFF for priority 3: its QP stops, the priority 0 QP goes on.
  const auto xoff = send_frame(false, {3}, 0xffff);
  ASSERT_TRUE(pump_until([&] { return counter("rx_prio3_pause") == 1; }, 1s));
  const std::uint64_t held = sent(0), other = sent(1);
  pump_until_time(xoff + 1s);
  EXPECT_EQ(sent(0), held) << "priority 3 sent while paused";
  EXPECT_GT(sent(1), other + 10'000) << "priority 0 stopped too";

  // XON: priority 3 sends again at once, long before its pause would have ended.
  send_frame(false, {3}, 0);
  ASSERT_TRUE(pump_until([&] { return counter("rx_prio3_pause") == 2; }, 1s));
  EXPECT_TRUE(pump_until([&] { return sent(0) > held; }, 5s));
  EXPECT_LT(Clock::now(), xoff + 1680ms) << "resumed only when the pause ran out, not at the XON";

  // XOFF again, left to run out: nothing for a second, then it resumes by itself.
  const auto xoff2 = send_frame(false, {3}, 0xffff);
  ASSERT_TRUE(pump_until([&] { return counter("rx_prio3_pause") == 3; }, 1s));
  const std::uint64_t held2 = sent(0);
  pump_until_time(xoff2 + 1s);
  EXPECT_EQ(sent(0), held2);
  EXPECT_TRUE(pump_until([&] { return sent(0) > held2; }, 10s)) << "the pause never ran out";

  // 802.3x PAUSE stops both, its XON restarts both.
  const auto pause = send_frame(true, {}, 0xffff);
  ASSERT_TRUE(pump_until([&] { return counter("rx_pause_ctrl_phy") == 1; }, 1s));
  const std::uint64_t both3 = sent(0), both0 = sent(1);
  pump_until_time(pause + 500ms);
  EXPECT_EQ(sent(0), both3);
  EXPECT_EQ(sent(1), both0);
  send_frame(true, {}, 0);
  ASSERT_TRUE(pump_until([&] { return counter("rx_pause_ctrl_phy") == 2; }, 1s));
  EXPECT_TRUE(pump_until([&] { return sent(0) > both3 && sent(1) > both0; }, 5s));

  // The counters equal the frames sent: 3 PFC and 2 PAUSE name priority 3, the PAUSEs the rest.
  EXPECT_EQ(counter("rx_prio3_pause"), 5u);
  EXPECT_EQ(counter("rx_prio0_pause"), 2u);
  EXPECT_EQ(counter("rx_prio6_pause"), 2u);
  // Paused at least for the XOFF that ran out (1.68 s), at most for the whole test.
  const auto elapsed_us =
      std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - test_began).count();
  EXPECT_GE(counter("rx_prio3_pause_duration"), 1'677'696u);
  EXPECT_LE(counter("rx_prio3_pause_duration"), static_cast<std::uint64_t>(elapsed_us));
  EXPECT_LT(counter("rx_prio0_pause_duration"), counter("rx_prio3_pause_duration"));
  // The frames left through the receiver's netdev: they are no request to it.
  EXPECT_EQ(counter(*receiver_, "rx_prio3_pause"), 0u);
  EXPECT_EQ(failures_, 0);
}

}  // namespace
}  // namespace rocehil::traffic
