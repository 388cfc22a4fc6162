// The ETHTOOL_GSTATS reader on a real veth pair (root, label system). The names and values come
// from the kernel's veth driver (drivers/net/veth.c: peer_ifindex, then per-queue XDP counters),
// so they are checked against the kernel's own view: a veth's peer_ifindex is its peer's
// /sys/class/net/PEER/ifindex, and the reader's names are what the kernel lists for ETH_SS_STATS.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include "rocehil/traffic/nic_counters.hpp"

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

}  // namespace
}  // namespace rocehil::traffic
