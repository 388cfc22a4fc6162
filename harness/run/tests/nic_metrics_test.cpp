// The nic_* metrics from the deltas agents report: summed over hosts, absent (with host, NIC and
// counter named) where any NIC lacks the counter, and kept per host for the report.
#include "rocehil/run/nic_metrics.hpp"

#include <gtest/gtest.h>

#include "rocehil/suites/grade.hpp"

namespace rocehil::run {
namespace {

HostNic connectx(const std::string& host, std::uint64_t cnps_sent, std::uint64_t seq_err) {
  HostNic h{host, {}};
  h.delta.nic = {.rdma_device = "mlx5_0", .port = 1, .netdev = "ens1f0np0"};
  h.delta.deltas = {{"hw_counters/np_cnp_sent", cnps_sent},
                    {"hw_counters/rp_cnp_handled", cnps_sent / 2},
                    {"hw_counters/np_ecn_marked_roce_packets", 3 * cnps_sent},
                    {"hw_counters/out_of_sequence", 0},
                    {"hw_counters/packet_seq_err", seq_err},
                    {"hw_counters/local_ack_timeout_err", 1},
                    {"hw_counters/roce_adp_retrans", 2},
                    {"hw_counters/out_of_buffer", 0},
                    {"counters/port_rcv_data", 1000},
                    {"counters/port_xmit_data", 250},
                    {"statistics/rx_bytes", 99},
                    {"ethtool/rx_discards_phy", 0}};
  for (int p = 0; p < 8; ++p) {
    h.delta.deltas["ethtool/rx_prio" + std::to_string(p) + "_pause"] = p == 3 ? 40 : 0;
    h.delta.deltas["ethtool/tx_prio" + std::to_string(p) + "_pause"] = 0;
    h.delta.deltas["ethtool/rx_prio" + std::to_string(p) + "_pause_duration"] = p == 3 ? 120 : 0;
    // The per-priority traffic group of mlx5's ethtool -S (en_stats.c).
    h.delta.deltas["ethtool/rx_prio" + std::to_string(p) + "_bytes"] = p == 3 ? 6000 : 10;
    h.delta.deltas["ethtool/tx_prio" + std::to_string(p) + "_bytes"] = p == 3 ? 1500 : 0;
    h.delta.deltas["ethtool/rx_prio" + std::to_string(p) + "_discards"] = 0;
  }
  return h;
}

// Soft-RoCE's own counters, named as `grep -H . /sys/class/infiniband/rxe0/ports/1/hw_counters/*`
// printed them in a Debian 12 guest (kernel 6.1.0-56) after a 4-QP bw case through a shaped
// uplink; rxe has no counters/ directory.
HostNic rxe(const std::string& host) {
  HostNic h{host, {}};
  h.delta.nic = {.rdma_device = "rxe0", .port = 1, .netdev = "eth0"};
  h.delta.deltas = {{"hw_counters/sent_pkts", 54293},      {"hw_counters/rcvd_pkts", 4875},
                    {"hw_counters/duplicate_request", 32}, {"hw_counters/out_of_seq_request", 0},
                    {"hw_counters/rcvd_seq_err", 243},     {"hw_counters/completer_retry_err", 313},
                    {"hw_counters/retry_exceeded_err", 0}, {"hw_counters/rcvd_rnr_err", 0},
                    {"hw_counters/link_downed", 0},        {"statistics/rx_bytes", 320000},
                    {"statistics/tx_bytes", 480000000}};
  return h;
}

TEST(NicMetrics, RxeCountersBecomeTheSameMetricsAndItsBytesAreTheNetdevs) {
  const suites::Measured m = nic_metrics({rxe("h1")});
  EXPECT_EQ(m.values.at("nic_retransmits"), 313);  // completer_retry_err: go-back-N restarts
  EXPECT_EQ(m.values.at("nic_seq_errors"), 243);
  EXPECT_EQ(m.values.at("nic_out_of_sequence"), 0);
  // rxe sends through eth0's UDP stack: the netdev's bytes are its RoCE bytes.
  EXPECT_EQ(m.values.at("nic_tx_bytes"), 480000000);
  EXPECT_EQ(m.values.at("nic_rx_bytes"), 320000);
  // No ECN, CNP or DCQCN code in rxe: absent, never 0.
  EXPECT_FALSE(m.values.contains("nic_cnps_sent"));
  ASSERT_TRUE(m.unmeasured.contains("nic_cnps_sent"));
  EXPECT_NE(m.unmeasured.at("nic_cnps_sent")
                .find("h1 rxe0 port 1 (eth0) has no counter "
                      "hw_counters/np_cnp_sent"),
            std::string::npos);
  EXPECT_FALSE(m.values.contains("nic_ack_timeouts"));
  // A fabric of both kinds adds each NIC's own counter.
  const suites::Measured mixed = nic_metrics({rxe("h1"), connectx("h2", 4, 5)});
  EXPECT_EQ(mixed.values.at("nic_retransmits"), 313 + 2 + 5);
  EXPECT_EQ(mixed.values.at("nic_tx_bytes"), 480000000 + 4 * 250);
}

TEST(NicMetrics, SummedOverHostsWithIbtaWordsInBytes) {
  const suites::Measured m = nic_metrics({connectx("h1", 12, 0), connectx("h2", 4, 5)});
  EXPECT_EQ(m.values.at("nic_cnps_sent"), 16);
  EXPECT_EQ(m.values.at("nic_cnps_handled"), 8);
  EXPECT_EQ(m.values.at("nic_ecn_marked"), 48);
  EXPECT_EQ(m.values.at("nic_seq_errors"), 5);
  EXPECT_EQ(m.values.at("nic_ack_timeouts"), 2);
  EXPECT_EQ(m.values.at("nic_retransmits"), 2 + 0 + 2 + 5);  // roce_adp_retrans + packet_seq_err
  EXPECT_EQ(m.values.at("nic_rx_pause[3]"), 80);
  EXPECT_EQ(m.values.at("nic_rx_pause[0]"), 0);
  EXPECT_EQ(m.values.at("nic_pause_duration_us[3]"), 240);
  EXPECT_EQ(m.values.at("nic_rx_bytes"), 8000);  // port_rcv_data counts 4-byte words
  EXPECT_EQ(m.values.at("nic_tx_bytes"), 2000);
  EXPECT_EQ(m.values.at("nic_rx_bytes[3]"), 12000);  // by priority: ethtool's PHY counters
  EXPECT_EQ(m.values.at("nic_rx_bytes[0]"), 20);
  EXPECT_EQ(m.values.at("nic_tx_bytes[3]"), 3000);
  EXPECT_EQ(m.values.at("nic_discards[3]"), 0);
  EXPECT_TRUE(m.unmeasured.empty());
}

// One NIC without the counter makes the sum unknown: a partial sum would pass a threshold the
// whole fabric might fail.
TEST(NicMetrics, OneNicWithoutTheCounterMakesItAbsentNamingHostNicAndCounter) {
  HostNic old = connectx("h2", 4, 0);
  old.delta.deltas.erase("hw_counters/np_cnp_sent");
  old.delta.deltas.erase("hw_counters/roce_adp_retrans");  // no roce_accl: packet_seq_err alone
  HostNic reset = connectx("h3", 4, 0);
  reset.delta.deltas.erase("hw_counters/rp_cnp_handled");
  reset.delta.reset = {"hw_counters/rp_cnp_handled"};
  const suites::Measured m = nic_metrics({connectx("h1", 12, 0), old, reset});
  EXPECT_FALSE(m.values.contains("nic_cnps_sent"));
  EXPECT_EQ(m.unmeasured.at("nic_cnps_sent"),
            "h2 mlx5_0 port 1 (ens1f0np0) has no counter hw_counters/np_cnp_sent");
  EXPECT_NE(m.unmeasured.at("nic_cnps_handled")
                .find("h3 mlx5_0 port 1 (ens1f0np0): "
                      "hw_counters/rp_cnp_handled went backwards"),
            std::string::npos);
  EXPECT_EQ(m.values.at("nic_retransmits"), 2 + 0 + 2);
  const auto g = suites::grade({*suites::parse_threshold("nic_cnps_sent > 0").threshold}, m.values,
                               {}, m.unmeasured);
  EXPECT_EQ(g.verdict, suites::Verdict::error);
  EXPECT_NE(g.results[0].evaluation.detail.find("h2 mlx5_0"), std::string::npos);
}

// A 32-bit counter whose wrap was impossible (traffic/nic_counters.hpp) is a reset: the metrics
// over it are absent with the counter's own reason, the sums it belongs to too (never part of one).
TEST(NicMetrics, ACounterResetAloneLeavesEveryMetricOverItAbsentWithItsReason) {
  HostNic h = connectx("h2", 4, 0);
  h.delta.deltas.erase("hw_counters/packet_seq_err");
  h.delta.reset = {"hw_counters/packet_seq_err"};
  h.delta.reset_why["hw_counters/packet_seq_err"] =
      "hw_counters/packet_seq_err went backwards (from 1000 to 17); a 32-bit wrap would mean "
      "4294966313 in 2 s, more than the 1500 packets the NIC sent and received, so it was reset";
  const suites::Measured m = nic_metrics({connectx("h1", 12, 3), h});
  for (const char* metric : {"nic_seq_errors", "nic_retransmits"}) {
    EXPECT_FALSE(m.values.contains(metric)) << metric;
    EXPECT_EQ(m.unmeasured.at(metric),
              "h2 mlx5_0 port 1 (ens1f0np0): " + h.delta.reset_why.begin()->second)
        << metric;
  }
  EXPECT_EQ(m.values.at("nic_cnps_sent"), 16);  // the NIC's other counters still count
}

// A NIC reset during the case (new firmware, a driver reload) has no counter deltas at all: every
// metric over its counters is absent, saying why, and a threshold on it grades error.
TEST(NicMetrics, ANicResetDuringTheCaseLeavesItsMetricsAbsentSayingWhy) {
  HostNic flashed = connectx("h2", 4, 0);
  for (const auto& [counter, delta] : flashed.delta.deltas) flashed.delta.reset.push_back(counter);
  flashed.delta.deltas.clear();
  flashed.delta.device_reset = "its firmware changed from 28.39.1002 to 28.40.1000";
  const suites::Measured m = nic_metrics({connectx("h1", 12, 0), flashed});
  EXPECT_FALSE(m.values.contains("nic_cnps_sent"));
  EXPECT_EQ(m.unmeasured.at("nic_cnps_sent"),
            "h2 mlx5_0 port 1 (ens1f0np0) was reset during the case (its firmware changed from "
            "28.39.1002 to 28.40.1000), so its counters have no delta");
  EXPECT_FALSE(m.values.contains("nic_retransmits"));
  const auto g = suites::grade({*suites::parse_threshold("nic_cnps_sent > 0").threshold}, m.values,
                               {}, m.unmeasured);
  EXPECT_EQ(g.verdict, suites::Verdict::error);
}

// soft on a veth: no RDMA device, no pause counters; the netdev's statistics are its bytes.
TEST(NicMetrics, AVethUnderSoftHasBytesAndNothingElse) {
  HostNic veth{"h1", {}};
  veth.delta.nic = {.rdma_device = "", .port = 1, .netdev = "v1"};
  veth.delta.deltas = {
      {"statistics/rx_bytes", 7000}, {"statistics/tx_bytes", 9000}, {"ethtool/peer_ifindex", 0}};
  const suites::Measured m = nic_metrics({veth});
  EXPECT_EQ(m.values.at("nic_rx_bytes"), 7000);
  EXPECT_EQ(m.values.at("nic_tx_bytes"), 9000);
  EXPECT_EQ(m.unmeasured.at("nic_cnps_sent"),
            "h1 v1 has no counter hw_counters/np_cnp_sent (its provider uses no RDMA device)");
  EXPECT_EQ(m.unmeasured.at("nic_rx_pause[3]"), "h1 v1 has no counter ethtool/rx_prio3_pause");
  EXPECT_EQ(m.unmeasured.at("nic_tx_bytes[3]"), "h1 v1 has no counter ethtool/tx_prio3_bytes");
  EXPECT_EQ(nic_metrics({}).unmeasured.count("nic_rx_bytes"), 1u);
}

TEST(NicMetrics, OneEntryPerHostAndNicAndPerHostValuesInTheRecord) {
  const auto nics =
      distinct_nics({connectx("h1", 12, 0), connectx("h1", 12, 0), connectx("h2", 1, 0)});
  ASSERT_EQ(nics.size(), 2u);
  const nlohmann::json j = nics_json(nics);
  EXPECT_EQ(j[0]["host"], "h1");
  EXPECT_EQ(j[0]["metrics"]["nic_cnps_sent"], 12);
  EXPECT_EQ(j[1]["metrics"]["nic_cnps_sent"], 1);
  EXPECT_FALSE(j[0]["deltas"].contains("hw_counters/out_of_sequence"));  // zero: left out
  EXPECT_EQ(j[0]["deltas"]["hw_counters/np_cnp_sent"], 12);
}

TEST(NicMetrics, PauseFramesPerPriorityOrAllOfThemAndNoneWithoutTheCounter) {
  // connectx(): 40 received on priority 3, nothing else, nothing sent.
  const std::vector<HostNic> nics = {connectx("h1", 10, 0)};
  EXPECT_EQ(pause_frames(nics, "h1", "rx"), 40.0);
  EXPECT_EQ(pause_frames(nics, "h1", "rx", 3), 40.0);
  EXPECT_EQ(pause_frames(nics, "h1", "rx", 4), 0.0);
  EXPECT_EQ(pause_frames(nics, "h1", "tx", 3), 0.0);
  EXPECT_FALSE(pause_frames(nics, "h2", "rx"));  // not a host of these NICs
  // A NIC without priority 5's counter has no total, nor priority 5; priority 3 still counts.
  std::vector<HostNic> partial = nics;
  partial[0].delta.deltas.erase("ethtool/rx_prio5_pause");
  EXPECT_FALSE(pause_frames(partial, "h1", "rx"));
  EXPECT_FALSE(pause_frames(partial, "h1", "rx", 5));
  EXPECT_EQ(pause_frames(partial, "h1", "rx", 3), 40.0);
}

}  // namespace
}  // namespace rocehil::run
