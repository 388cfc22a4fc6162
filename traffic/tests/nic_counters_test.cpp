// The NIC counter reader over a sysfs tree laid out as a ConnectX-6 host's (mlx5, kernel 6.1):
// counters/ holds the IBTA PMA attributes of drivers/infiniband/core/sysfs.c (pma_attrs_ext and
// the error counters), hw_counters/ the names of drivers/infiniband/hw/mlx5/counters.c
// (basic_q_cnts, out_of_seq_q_cnts, retrans_q_cnts, extended_err_cnts, roce_accl_cnts, cong_cnts,
// ext_ppcnt_cnts) plus its `lifespan` setting, statistics/ the netdev attributes of
// net/core/net-sysfs.c. Values change between two readings the way a run changes them.
#include "rocehil/traffic/nic_counters.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>

namespace rocehil::traffic {
namespace {

namespace fs = std::filesystem;

constexpr const char* ibta_counters[] = {"VL15_dropped",
                                         "excessive_buffer_overrun_errors",
                                         "link_downed",
                                         "link_error_recovery",
                                         "local_link_integrity_errors",
                                         "multicast_rcv_packets",
                                         "multicast_xmit_packets",
                                         "port_rcv_constraint_errors",
                                         "port_rcv_data",
                                         "port_rcv_errors",
                                         "port_rcv_packets",
                                         "port_rcv_remote_physical_errors",
                                         "port_rcv_switch_relay_errors",
                                         "port_xmit_constraint_errors",
                                         "port_xmit_data",
                                         "port_xmit_discards",
                                         "port_xmit_packets",
                                         "port_xmit_wait",
                                         "symbol_error",
                                         "unicast_rcv_packets",
                                         "unicast_xmit_packets"};

constexpr const char* mlx5_hw_counters[] = {"rx_write_requests",
                                            "rx_read_requests",
                                            "rx_atomic_requests",
                                            "out_of_buffer",
                                            "out_of_sequence",
                                            "duplicate_request",
                                            "rnr_nak_retry_err",
                                            "packet_seq_err",
                                            "implied_nak_seq_err",
                                            "local_ack_timeout_err",
                                            "resp_local_length_error",
                                            "resp_cqe_error",
                                            "req_cqe_error",
                                            "req_remote_invalid_request",
                                            "req_remote_access_errors",
                                            "resp_remote_access_errors",
                                            "resp_cqe_flush_error",
                                            "req_cqe_flush_error",
                                            "roce_adp_retrans",
                                            "roce_adp_retrans_to",
                                            "roce_slow_restart",
                                            "roce_slow_restart_cnps",
                                            "roce_slow_restart_trans",
                                            "rp_cnp_ignored",
                                            "rp_cnp_handled",
                                            "np_ecn_marked_roce_packets",
                                            "np_cnp_sent",
                                            "rx_icrc_encapsulated"};

constexpr const char* netdev_statistics[] = {
    "collisions",        "multicast",           "rx_bytes",          "rx_compressed",
    "rx_crc_errors",     "rx_dropped",          "rx_errors",         "rx_fifo_errors",
    "rx_frame_errors",   "rx_length_errors",    "rx_missed_errors",  "rx_nohandler",
    "rx_over_errors",    "rx_packets",          "tx_aborted_errors", "tx_bytes",
    "tx_carrier_errors", "tx_compressed",       "tx_dropped",        "tx_errors",
    "tx_fifo_errors",    "tx_heartbeat_errors", "tx_packets",        "tx_window_errors"};

class ConnectX6Sysfs : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("rocehil-nic-" + std::to_string(getpid()));
    fs::remove_all(root_);
    for (const char* name : ibta_counters) set(port() / "counters" / name, 0);
    for (const char* name : mlx5_hw_counters) set(port() / "hw_counters" / name, 0);
    set(port() / "hw_counters" / "lifespan", 10);  // a setting, not a counter
    for (const char* name : netdev_statistics) set(stats() / name, 0);
    set(stats().parent_path() / "carrier_down_count", 1);  // net-sysfs.c: counted since boot
    set(stats().parent_path() / "mtu", 9000);              // a netdev attribute, not a counter
    fs::create_directories(root_ / "sys/class/infiniband/mlx5_0/device/net/ens1f0np0");
  }
  void TearDown() override { fs::remove_all(root_); }

  fs::path port() const { return root_ / "sys/class/infiniband/mlx5_0/ports/1"; }
  fs::path stats() const { return root_ / "sys/class/net/ens1f0np0/statistics"; }
  static void set(const fs::path& path, std::uint64_t value) {
    fs::create_directories(path.parent_path());
    std::ofstream(path) << value << "\n";
  }
  NicCounterSnapshot read() const {
    return read_nic_counters({.rdma_device = "mlx5_0", .port = 1, .netdev = "ens1f0np0"},
                             {.root = root_.string(), .ethtool = false});
  }

  fs::path root_;
};

TEST_F(ConnectX6Sysfs, EveryCounterIsReadUnderItsSourceAndTheSettingIsNot) {
  const NicCounterSnapshot s = read();
  EXPECT_TRUE(s.problems.empty()) << s.problems.front();
  EXPECT_EQ(s.values.size(), std::size(ibta_counters) + std::size(mlx5_hw_counters) +
                                 std::size(netdev_statistics) + 1);  // + carrier_down_count
  EXPECT_EQ(s.values.at("netdev/carrier_down_count"), 1u);
  EXPECT_TRUE(s.values.contains("counters/port_xmit_data"));
  EXPECT_TRUE(s.values.contains("hw_counters/np_cnp_sent"));
  EXPECT_TRUE(s.values.contains("statistics/rx_bytes"));
  EXPECT_FALSE(s.values.contains("hw_counters/lifespan"));
  EXPECT_GT(s.at_ns, 0);
}

TEST_F(ConnectX6Sysfs, DeltasAreWhatChangedBetweenTheReadings) {
  set(port() / "hw_counters" / "np_cnp_sent", 1000);
  set(stats() / "rx_bytes", 5'000'000'000ULL);
  const NicCounterSnapshot before = read();
  set(port() / "hw_counters" / "np_cnp_sent", 1012);
  set(port() / "hw_counters" / "rp_cnp_handled", 7);
  set(stats() / "rx_bytes", 5'000'065'536ULL);
  set(stats().parent_path() / "carrier_down_count", 2);  // the link went down once meanwhile
  const NicCounterDelta d = counter_delta(before, read());
  EXPECT_EQ(d.deltas.at("netdev/carrier_down_count"), 1u);
  EXPECT_EQ(d.deltas.at("hw_counters/np_cnp_sent"), 12u);
  EXPECT_EQ(d.deltas.at("hw_counters/rp_cnp_handled"), 7u);
  EXPECT_EQ(d.deltas.at("statistics/rx_bytes"), 65536u);
  EXPECT_EQ(d.deltas.at("counters/port_xmit_data"), 0u);
  EXPECT_TRUE(d.reset.empty());
  EXPECT_EQ(d.nic.rdma_device, "mlx5_0");
  EXPECT_GE(d.seconds, 0);
}

// A 32-bit queue counter passing 2^32 wraps and is unwrapped, when nothing else says the NIC
// was reset.
TEST_F(ConnectX6Sysfs, A32BitQueueCounterThatWentBackwardsAloneWrapped) {
  set(port() / "hw_counters" / "out_of_sequence", 0xFFFFFFF0u);
  set(stats() / "tx_packets", 900);
  const NicCounterSnapshot before = read();
  set(port() / "hw_counters" / "out_of_sequence", 5);
  set(stats() / "tx_packets", 1900);
  const NicCounterDelta d = counter_delta(before, read());
  EXPECT_EQ(d.deltas.at("hw_counters/out_of_sequence"), 0x15u);  // 16 to the wrap, then 5
  EXPECT_EQ(d.deltas.at("statistics/tx_packets"), 1000u);
  EXPECT_TRUE(d.reset.empty());
  EXPECT_EQ(d.device_reset, "");
  EXPECT_TRUE(is_32bit_counter("hw_counters/packet_seq_err"));
  EXPECT_FALSE(is_32bit_counter("hw_counters/rp_cnp_handled"));
  EXPECT_FALSE(is_32bit_counter("ethtool/out_of_sequence"));
}

// A wrap is believed only when it is possible: 4,294,966,313 out-of-sequence packets while the
// NIC moved 1,500 packets is a reset of the counter, not a count; its metric then has no delta.
TEST_F(ConnectX6Sysfs, AWrapLargerThanThePacketsTheNicMovedIsAReset) {
  set(port() / "hw_counters" / "out_of_sequence", 1000);
  set(port() / "hw_counters" / "duplicate_request", 0xFFFFFFF0u);
  set(stats().parent_path() / "speed", 100000);
  const NicCounterSnapshot before = read();
  EXPECT_EQ(before.speed_mbps, 100000u);
  set(port() / "hw_counters" / "out_of_sequence", 17);
  set(port() / "hw_counters" / "duplicate_request", 3);  // 19: possible
  set(stats() / "tx_packets", 1000);
  set(stats() / "rx_packets", 500);
  const NicCounterDelta d = counter_delta(before, read());
  EXPECT_EQ(d.device_reset, "");
  EXPECT_EQ(d.deltas.count("hw_counters/out_of_sequence"), 0u);
  EXPECT_EQ(d.reset, (std::vector<std::string>{"hw_counters/out_of_sequence"}));
  EXPECT_EQ(d.deltas.at("hw_counters/duplicate_request"), 19u);
  const std::string why = d.reset_why.at("hw_counters/out_of_sequence");
  EXPECT_EQ(why.rfind("hw_counters/out_of_sequence went backwards (from 1000 to 17); a 32-bit "
                      "wrap would mean 4294966313 in ",
                      0),
            0u)
      << why;
  EXPECT_NE(why.find("more than the 1500 packets the NIC sent and received (statistics/tx_packets "
                     "+ statistics/rx_packets), so it was reset"),
            std::string::npos)
      << why;
}

// Without packet counters (rxe's hw_counters alone, say), the line rate bounds a wrap: minimum
// frames both ways for the seconds between the readings.
TEST(NicCounterDelta, WithoutPacketCountersTheLineRateBoundsAWrap) {
  NicCounterSnapshot before, after;
  before.at_ns = 1'000'000'000;
  after.at_ns = 2'000'000'000;  // 1 s: 100G carries 2 x 148.8 M minimum frames both ways
  after.speed_mbps = 100000;
  before.values = {{"hw_counters/out_of_sequence", 0xFFFFFF00u},
                   {"hw_counters/packet_seq_err", 1000}};
  after.values = {{"hw_counters/out_of_sequence", 0x10}, {"hw_counters/packet_seq_err", 17}};
  NicCounterDelta d = counter_delta(before, after);
  EXPECT_EQ(d.deltas.at("hw_counters/out_of_sequence"), 0x110u);
  EXPECT_EQ(d.reset, (std::vector<std::string>{"hw_counters/packet_seq_err"}));
  EXPECT_NE(d.reset_why.at("hw_counters/packet_seq_err")
                .find("more than the 2.976e+08 minimum frames its 100000 Mb/s link carries both "
                      "ways in that time"),
            std::string::npos)
      << d.reset_why.at("hw_counters/packet_seq_err");
  after.speed_mbps = 0;  // a netdev that gives no speed: the fastest NIC there is
  d = counter_delta(before, after);
  EXPECT_NE(d.reset_why.at("hw_counters/packet_seq_err").find("an 800 Gb/s link"),
            std::string::npos);
}

// A 64-bit counter of the device or its netdev does not wrap: going backwards, it says the NIC
// was reset (a driver reload), so the 32-bit one that went backwards with it was reset too, not
// wrapped, and no counter's difference measures the case.
TEST_F(ConnectX6Sysfs, A64BitCounterGoingBackwardsSaysTheNicWasResetAndNothingHasADelta) {
  set(port() / "hw_counters" / "out_of_sequence", 0xFFFFFFF0u);
  set(port() / "hw_counters" / "np_cnp_sent", 0xFFFFFFF0u);
  set(port() / "hw_counters" / "rp_cnp_handled", 10);
  set(stats() / "tx_packets", 900);
  const NicCounterSnapshot before = read();
  set(port() / "hw_counters" / "out_of_sequence", 5);
  set(port() / "hw_counters" / "np_cnp_sent", 5);
  set(port() / "hw_counters" / "rp_cnp_handled", 30);  // counted again from 0, past 10
  set(stats() / "tx_packets", 3);
  const NicCounterDelta d = counter_delta(before, read());
  EXPECT_EQ(d.device_reset, "hw_counters/np_cnp_sent went backwards, from 4294967280 to 5");
  EXPECT_TRUE(d.deltas.empty());
  EXPECT_EQ(d.reset.size(), before.values.size());
  EXPECT_TRUE(std::is_sorted(d.reset.begin(), d.reset.end()));
  EXPECT_NE(std::find(d.reset.begin(), d.reset.end(), "hw_counters/out_of_sequence"),
            d.reset.end());
  EXPECT_NE(std::find(d.reset.begin(), d.reset.end(), "hw_counters/rp_cnp_handled"), d.reset.end());
}

// New firmware (bisect --apply flashing a candidate) restarts every counter from zero: a
// firmware version that changed says so even where every counter went up.
TEST_F(ConnectX6Sysfs, AFirmwareChangeBetweenTheReadingsMeansNoDeltas) {
  const fs::path fw = root_ / "sys/class/infiniband/mlx5_0/fw_ver";
  std::ofstream(fw) << "28.39.1002\n";
  set(port() / "hw_counters" / "np_cnp_sent", 10);
  const NicCounterSnapshot before = read();
  EXPECT_EQ(before.firmware, "28.39.1002");
  std::ofstream(fw) << "28.40.1000\n";
  set(port() / "hw_counters" / "np_cnp_sent", 50);
  const NicCounterDelta d = counter_delta(before, read());
  EXPECT_EQ(d.device_reset, "its firmware changed from 28.39.1002 to 28.40.1000");
  EXPECT_TRUE(d.deltas.empty());
  EXPECT_EQ(d.reset.size(), before.values.size());
}

// ethtool -S lists a few gauges among its counters: one of them going down alone is that
// statistic's reset, not the NIC's.
TEST(NicCounterDelta, AnEthtoolStatisticGoingDownAloneIsNotANicReset) {
  NicCounterSnapshot before, after;
  before.values = {{"ethtool/rx_cache_busy", 40}, {"hw_counters/np_cnp_sent", 5}};
  after.values = {{"ethtool/rx_cache_busy", 12}, {"hw_counters/np_cnp_sent", 9}};
  const NicCounterDelta d = counter_delta(before, after);
  EXPECT_EQ(d.device_reset, "");
  EXPECT_EQ(d.reset, std::vector<std::string>{"ethtool/rx_cache_busy"});
  EXPECT_EQ(d.deltas.at("hw_counters/np_cnp_sent"), 4u);
}

// A counter only one reading has (a NIC that lacks it, a file that came or went) has no delta;
// a directory that is missing is a problem named with its path.
TEST_F(ConnectX6Sysfs, AbsentCountersHaveNoDeltaAndMissingSourcesAreNamed) {
  fs::remove(port() / "hw_counters" / "roce_adp_retrans");  // a NIC without roce_accl
  const NicCounterSnapshot before = read();
  set(port() / "hw_counters" / "roce_adp_retrans", 4);
  const NicCounterDelta d = counter_delta(before, read());
  EXPECT_FALSE(d.deltas.contains("hw_counters/roce_adp_retrans"));
  const NicCounterSnapshot none =
      read_nic_counters({.rdma_device = "mlx5_9", .port = 1, .netdev = "eth9"},
                        {.root = root_.string(), .ethtool = false});
  EXPECT_TRUE(none.values.empty());
  ASSERT_EQ(none.problems.size(), 3u);
  EXPECT_NE(none.problems[0].find("mlx5_9 port 1 has no counters/"), std::string::npos);
  EXPECT_NE(none.problems[2].find("eth9 has no statistics/"), std::string::npos);
  EXPECT_EQ(netdev_of_rdma_device("mlx5_0", root_.string()), "ens1f0np0");
  EXPECT_EQ(netdev_of_rdma_device("mlx5_9", root_.string()), "");
}

TEST(NicCounters, TheLoopbackAddressIsOnLoAndEthtoolNamesAMissingNetdev) {
  EXPECT_EQ(netdev_with_address("127.0.0.1"), "lo");
  EXPECT_EQ(netdev_with_address("not an address"), "");
  try {
    read_ethtool_stats("rocehil-none0");
    FAIL() << "no error for a netdev that does not exist";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("ethtool statistics of rocehil-none0"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace rocehil::traffic
