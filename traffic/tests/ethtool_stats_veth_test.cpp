// The ETHTOOL_GSTATS reader on a real veth pair (root, label system). The names and values come
// from the kernel's veth driver (drivers/net/veth.c: peer_ifindex, then per-queue XDP counters),
// so they are checked against the kernel's own view: a veth's peer_ifindex is its peer's
// /sys/class/net/PEER/ifindex, and the reader's names are what the kernel lists for ETH_SS_STATS.
#include <gtest/gtest.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>

#include "rocehil/traffic/nic_counters.hpp"
#include "rocehil/traffic/provider.hpp"

namespace rocehil::traffic {
namespace {

class VethPair : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "needs root to make a veth pair";
    a_ = "rhet" + std::to_string(getpid()) + "a";
    b_ = "rhet" + std::to_string(getpid()) + "b";
    const std::string add = "ip link add " + a_ + " type veth peer name " + b_;
    ASSERT_EQ(std::system(add.c_str()), 0) << add;
  }
  void TearDown() override {
    if (!a_.empty()) std::system(("ip link del " + a_ + " 2>/dev/null").c_str());
  }
  static std::uint64_t ifindex(const std::string& dev) {
    std::ifstream in("/sys/class/net/" + dev + "/ifindex");
    std::uint64_t v = 0;
    in >> v;
    return v;
  }
  std::string a_, b_;
};

TEST_F(VethPair, TheReaderSeesTheKernelsStatistics) {
  const auto a = read_ethtool_stats(a_);
  const auto b = read_ethtool_stats(b_);
  ASSERT_TRUE(a.contains("peer_ifindex"));
  EXPECT_EQ(a.at("peer_ifindex"), ifindex(b_));
  EXPECT_EQ(b.at("peer_ifindex"), ifindex(a_));
  EXPECT_GT(a.size(), 1u);  // the per-queue counters follow
  // Through the snapshot, beside the netdev's sysfs statistics.
  const NicCounterSnapshot s = read_nic_counters({.rdma_device = {}, .port = 1, .netdev = a_});
  EXPECT_TRUE(s.problems.empty()) << s.problems.front();
  EXPECT_EQ(s.values.at("ethtool/peer_ifindex"), ifindex(b_));
  EXPECT_TRUE(s.values.contains("statistics/rx_bytes"));
}

// A soft provider's port events: its address on one end of the pair, the other end taken down
// and up, as a cable pulled and put back. The provider sees its netdev's carrier go and come back
// from its poll loop, as an RNIC raises IBV_EVENT_PORT_ERR and IBV_EVENT_PORT_ACTIVE.
TEST_F(VethPair, TheSoftProviderRaisesPortEventsFromItsCarrier) {
  const std::string address = "198.18.254." + std::to_string(1 + getpid() % 250);
  for (const std::string& command : {"ip addr add " + address + "/32 dev " + a_,
                                     "ip link set " + a_ + " up", "ip link set " + b_ + " up"})
    ASSERT_EQ(std::system(command.c_str()), 0) << command;
  ProviderOptions options;
  options.address = address;
  auto provider = make_provider("soft", options);
  auto cq = provider->create_cq(16);
  // Polls (which runs the provider's loop) until `kind` arrives or two seconds pass.
  const auto wait_for = [&](const std::string& kind) {
    std::array<Completion, 4> batch{};
    std::vector<DeviceEvent> seen;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
    while (std::chrono::steady_clock::now() < deadline) {
      cq->poll(batch);
      for (auto& e : provider->take_events()) seen.push_back(std::move(e));
      for (const auto& e : seen)
        if (e.kind == kind) return seen;
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    return seen;
  };
  // Nothing happened yet: no event.
  EXPECT_TRUE(wait_for("none").empty());
  ASSERT_EQ(std::system(("ip link set " + b_ + " down").c_str()), 0);
  const auto down = wait_for("port_error");
  ASSERT_EQ(down.size(), 1u);
  EXPECT_EQ(down[0].device, a_);
  EXPECT_EQ(down[0].detail, "carrier lost");
  EXPECT_GT(down[0].at_ns, 1'700'000'000'000'000'000);  // wall clock, after 2023
  ASSERT_EQ(std::system(("ip link set " + b_ + " up").c_str()), 0);
  const auto up = wait_for("port_active");
  ASSERT_EQ(up.size(), 1u);
  EXPECT_EQ(up[0].detail, "carrier back");
  EXPECT_GE(up[0].at_ns, down[0].at_ns);
}

}  // namespace
}  // namespace rocehil::traffic
