#include "rocehil/suites/metrics.hpp"

#include <algorithm>
#include <iterator>
#include <string>

#include "rocehil/inventory/yaml_reader.hpp"

namespace rocehil::suites {

namespace {

template <typename List>
std::string_view nearest(const List& list, std::string_view name) {
  std::string_view best;
  std::size_t best_distance = 4;  // farther than 3 edits is no suggestion
  for (const auto& m : list) {
    const std::size_t d = inventory::edit_distance(name, m.name);
    if (d < best_distance) {
      best = m.name;
      best_distance = d;
    }
  }
  return best;
}

}  // namespace

const std::vector<MetricInfo>& known_metrics() {
  constexpr std::string_view agents = "the agents: payload bytes of completed work over its time";
  constexpr std::string_view iterations = "the agents: each iteration's end time";
  constexpr std::string_view pings = "the agents: ping-pong round trips / 2";
  constexpr std::string_view timelines =
      "the agents: each bw sender's completed bytes every 10 ms (engine rocehil)";
  constexpr std::string_view fair_rates =
      "the agents: each QP's rate (bw), each sending rank's bytes over its steps' time";
  constexpr std::string_view mirrors = "the capture points (mirror ports)";
  constexpr std::string_view data_captures = "the capture points (filter roce or all)";
  constexpr std::string_view rdma = "not measured (soft uses no RDMA device)";
  constexpr std::string_view no_perftest = "not measured (perftest needs an RDMA device)";
  constexpr std::string_view both_engines = "the agents' rounds with both engines, interleaved";
  constexpr std::string_view snmp_drops =
      "the switches (SNMP): IF-MIB ifInDiscards + ifOutDiscards, CISCO-SWITCH-QOS-MIB queue "
      "drops where served";
  constexpr std::string_view snmp_errors = "the switches (SNMP): IF-MIB ifInErrors + ifOutErrors";
  constexpr std::string_view snmp_pfc = "the switches (SNMP): CISCO-PFC-EXT-MIB, where served";
  constexpr std::string_view snmp_octets = "the switches (SNMP): IF-MIB ifHCInOctets";
  constexpr std::string_view snmp_timeline =
      "the switches (SNMP): ifHCOutOctets of the ports to the case's hosts, polled through the "
      "case";
  constexpr std::string_view perftest_table =
      "perftest's table (--out_json file where it writes one)";
  constexpr std::string_view iperf3_json = "iperf3's --json output (end.sum_received, sum_sent)";
  static const std::vector<MetricInfo> metrics = {
      {"busbw_gbps", "Gbit/s", "bus bandwidth (nccl-tests' busbw, in bits); bw: the payload rate",
       Index::none, agents, agents},
      {"algbw_gbps", "Gbit/s", "algorithm bandwidth: size / time, in bits", Index::none, agents,
       agents},
      {"time_us", "us", "a collective's mean time per iteration", Index::none, iterations,
       iterations},
      {"time_p99_us", "us", "a collective's 99th percentile time per iteration", Index::none,
       iterations, iterations},
      {"time_cv", "", "coefficient of variation of the time per iteration", Index::none, iterations,
       iterations},
      {"lat_p50_us", "us", "lat: median one-way latency", Index::none, pings, pings},
      {"lat_p99_us", "us", "lat: 99th percentile one-way latency", Index::none, pings, pings},
      {"lat_max_us", "us", "lat: largest one-way latency", Index::none, pings, pings},
      {"lat_avg_us", "us", "lat: mean one-way latency", Index::none, pings,
       "the agents: ping-pong round trips / 2 (engine perftest: its t_avg)"},
      {"fairness_jain", "",
       "Jain's index of the flows' rates, (sum x)^2 / (n sum x^2): 1 is even, 1/n one took all; "
       "bw: the sender's QPs; a collective: its sending ranks while they sent",
       Index::none, fair_rates, fair_rates},
      {"rate_deviation", "",
       "largest deviation of a flow's rate from the mean, as a fraction of the mean (flows as "
       "fairness_jain)",
       Index::none, fair_rates, fair_rates},
      {"retransmits", "packets", "packets sent again (go-back-N), all QPs", Index::none,
       "the soft QPs' requesters", "not measured (no per-QP counter): use nic_retransmits"},
      {"timeouts", "", "ACK timeouts, all QPs", Index::none, "the soft QPs' ACK timers",
       "not measured (no per-QP counter): use nic_ack_timeouts"},
      {"naks", "", "NAKs received, all QPs", Index::none, "the soft QPs' requesters",
       "not measured (no per-QP counter): use nic_seq_errors"},
      {"errors", "", "error completions and failed work requests", Index::none,
       "the agents: error completions", "the agents: error completions"},
      {"data_errors", "ranks", "ranks or QPs whose data arrived wrong", Index::none,
       "the agents: CRC-32 of what was sent and what arrived",
       "the agents: CRC-32 of what was sent and what arrived (host memory only)"},
      {"cnps", "frames", "CNPs the QPs handled (every sender's reaction point, summed)",
       Index::none, "the soft QPs' reaction points",
       "not measured (no per-QP counter): use nic_cnps_handled"},
      {"max_stall_ms", "ms",
       "the longest time a bw sender delivered nothing, from its first byte to its end (its "
       "completed bytes sampled every 10 ms; the worst sender of the case)",
       Index::none, timelines, timelines},
      {"recovery_ms", "ms",
       "after each fabric event (`events:`), until every bw sender's 100 ms rate is back at 90% "
       "of its rate in the second before; a sender never back counts the time to its end",
       Index::none, timelines, timelines},
      {"mirror_cnps", "frames",
       "CNPs seen on the mirror ports of the test's captures; [dscp=d]: those carrying DSCP d",
       Index::total_or_dscp, mirrors, mirrors},
      {"cnp_per_s", "frames/s", "CNPs per second of the test", Index::none, "cnps / seconds",
       "not measured (needs cnps)"},
      {"ecn_marked", "frames",
       "RoCEv2 frames with ECN CE seen on the mirror ports; [dscp=d]: those of DSCP d",
       Index::total_or_dscp, data_captures, data_captures},
      {"mirror_packets", "packets",
       "RoCEv2 packets seen on the mirror ports (CNPs and ACKs included); [dscp=d]: of DSCP d",
       Index::total_or_dscp, data_captures, data_captures},
      {"mirror_acks", "packets",
       "ACKs (AETH ACK syndrome) seen on the mirror ports; [dscp=d]: those carrying DSCP d",
       Index::total_or_dscp, data_captures, data_captures},
      {"mirror_naks", "packets",
       "NAKs (sequence error and others; RNR NAKs not) seen on the mirror ports; [dscp=d]: of DSCP "
       "d",
       Index::total_or_dscp, data_captures, data_captures},
      {"pfc_pause_fraction", "", "share of the test a priority was paused, per [priority]",
       Index::priority, mirrors, mirrors},
      {"pfc_storms", "", "pause storms (a priority paused longer than the storm threshold)",
       Index::none, mirrors, mirrors},
      {"pfc_frames", "frames",
       "PFC frames seen on the mirror ports; [p]: those with priority p's class-enable bit",
       Index::total_or_priority, mirrors, mirrors},
      {"ecmp_imbalance", "", "max / mean of the bytes on parallel uplinks (1 is even)", Index::none,
       "two or more capture points (filter roce or all)",
       "two or more capture points (filter roce or all)"},
      {"capture_coverage", "",
       "frames captured / (captured + dropped + lost upstream), lowest capture point; a remote "
       "mirror's frames lost on the way from its switch count by GRE sequence numbers",
       Index::none, "the capture points' drop counters", "the capture points' drop counters"},
      {"cnp_reconciliation", "",
       "CNPs the mirror ports saw / CNPs the NICs sent across racks (1: they agree)", Index::none,
       "mirror_cnps / the soft QPs' CNPs sent to other racks",
       "mirror_cnps / nic_cnps_sent of NICs whose peers are all in other racks"},
      {"pfc_reconciliation", "",
       "pause frames the mirror ports saw / those the NICs counted on mirrored NIC links; [p]: "
       "of priority p",
       Index::total_or_priority,
       "mirror pfc_frames / ethtool tx_prioP_pause + rx_prioP_pause, where the netdev has them",
       "mirror pfc_frames / ethtool tx_prioP_pause + rx_prioP_pause"},
      {"switch_drops", "packets",
       "packets the case's switches dropped (discards and queue drops, all their ports)",
       Index::none, snmp_drops, snmp_drops},
      {"switch_errors", "packets", "packets the case's switches received or sent in error",
       Index::none, snmp_errors, snmp_errors},
      {"switch_pfc_rx", "frames", "PFC frames the case's switches' ports received, per [priority]",
       Index::priority, snmp_pfc, snmp_pfc},
      {"switch_pfc_tx", "frames", "PFC frames the case's switches' ports sent, per [priority]",
       Index::priority, snmp_pfc, snmp_pfc},
      {"switch_spine_imbalance", "",
       "max / mean of the octets the spines received on their leaf-facing ports (1 is even)",
       Index::none, snmp_octets, snmp_octets},
      {"switch_recovery_ms", "ms",
       "after each fabric event (`events:`), until the bytes the switches sent to the case's hosts "
       "are back at 90% of their rate in the second before, to a polling interval (100 ms, or the "
       "switches' counter_refresh_ms)",
       Index::none, snmp_timeline, snmp_timeline},
      {"switch_pfc_reconciliation", "",
       "PFC frames host-facing switch ports received / those the hosts' NICs sent (1: they "
       "agree); [p]: of priority p",
       Index::total_or_priority,
       "switch_pfc_rx / ethtool tx_prioP_pause, where the netdev has it (veth: none)",
       "switch_pfc_rx / ethtool tx_prioP_pause"},
      {"switch_mirror_reconciliation", "",
       "bytes the mirror ports saw / octets the mirrored spine ports sent (1: they agree)",
       Index::none, "capture bytes / IF-MIB ifHCOutOctets of the mirrored ports",
       "capture bytes / IF-MIB ifHCOutOctets of the mirrored ports"},
      {"nic_cnps_sent", "frames", "CNPs the NICs sent (notification points)", Index::none, rdma,
       "hw_counters np_cnp_sent"},
      {"nic_cnps_handled", "frames", "CNPs the NICs reacted to (reaction points)", Index::none,
       rdma, "hw_counters rp_cnp_handled"},
      {"nic_ecn_marked", "packets", "RoCE packets that arrived with ECN CE", Index::none, rdma,
       "hw_counters np_ecn_marked_roce_packets"},
      {"nic_out_of_sequence", "packets", "packets the responders dropped as out of sequence",
       Index::none, rdma, "hw_counters out_of_sequence (rxe: out_of_seq_request)"},
      {"nic_seq_errors", "", "NAKs for a PSN sequence error the requesters received", Index::none,
       rdma, "hw_counters packet_seq_err (rxe: rcvd_seq_err)"},
      {"nic_ack_timeouts", "", "ACK timeouts that led to a retransmission", Index::none, rdma,
       "hw_counters local_ack_timeout_err"},
      {"nic_retransmits", "", "retransmission events (go-back-N restarts, not packets)",
       Index::none, rdma,
       "hw_counters roce_adp_retrans + packet_seq_err, those the NIC has (rxe: "
       "completer_retry_err)"},
      {"nic_rx_pause", "frames", "PFC pause frames the NICs received, per [priority]",
       Index::priority,
       "ethtool rx_prioP_pause, where the netdev has it (soft: its own count; veth: none)",
       "ethtool rx_prioP_pause"},
      {"nic_tx_pause", "frames", "PFC pause frames the NICs sent, per [priority]", Index::priority,
       "ethtool tx_prioP_pause, where the netdev has it (veth: none)", "ethtool tx_prioP_pause"},
      {"nic_pause_duration_us", "us", "time the NICs were paused, per [priority]", Index::priority,
       "ethtool rx_prioP_pause_duration, where the netdev has it (soft: its own count; veth: none)",
       "ethtool rx_prioP_pause_duration"},
      {"nic_discards", "packets",
       "packets the NICs' ports dropped for lack of buffer; [p]: of priority p",
       Index::total_or_priority, "ethtool rx_discards_phy, where the netdev has it (veth: none)",
       "ethtool rx_discards_phy; [p]: rx_prioP_discards (mlx5, kernels that read it)"},
      {"nic_out_of_buffer", "packets", "RoCE packets dropped for lack of a receive WQE",
       Index::none, rdma, "hw_counters out_of_buffer"},
      {"nic_rx_bytes", "bytes", "bytes the NICs received; [p]: of priority p (the frames' PCP)",
       Index::total_or_priority, "/sys/class/net/DEV/statistics/rx_bytes (veth: no [p])",
       "counters port_rcv_data x 4 (RoCE bypasses the netdev's own statistics; rxe, whose RoCE "
       "goes through its netdev and which has no port counters: statistics/rx_bytes); [p]: "
       "ethtool rx_prioP_bytes"},
      {"nic_tx_bytes", "bytes", "bytes the NICs sent; [p]: of priority p (the frames' PCP)",
       Index::total_or_priority, "/sys/class/net/DEV/statistics/tx_bytes (veth: no [p])",
       "counters port_xmit_data x 4 (RoCE bypasses the netdev's own statistics; rxe: "
       "statistics/tx_bytes); [p]: ethtool tx_prioP_bytes"},
      // calibrate_bw, calibrate_lat: rocehil's engine against perftest on the same pair.
      {"calibration_rocehil", "Gbit/s or us",
       "calibrate: rocehil's busbw_gbps (bw) or lat_p50_us (lat), median of its rounds",
       Index::none, no_perftest, both_engines},
      {"calibration_perftest", "Gbit/s or us",
       "calibrate: perftest's BW average (bw) or t_typical (lat), median of its rounds",
       Index::none, no_perftest, both_engines},
      {"calibration_ratio", "", "calibrate: calibration_rocehil / calibration_perftest",
       Index::none, no_perftest, both_engines},
      {"calibration_spread", "",
       "calibrate: (largest - smallest) / median of an engine's rounds, the larger of the two",
       Index::none, no_perftest, both_engines},
      // engine perftest: perftest's own columns, as its table prints them (the client's side).
      {"perftest_bw_peak_gbps", "Gbit/s",
       "engine perftest, bw: BW peak; absent where perftest did not measure it (runs by duration, "
       "over 20000 iterations: it prints 0.00)",
       Index::none, no_perftest, perftest_table},
      {"perftest_bw_average_gbps", "Gbit/s", "engine perftest, bw: BW average (also busbw_gbps)",
       Index::none, no_perftest, perftest_table},
      {"perftest_msg_rate_mpps", "Mpps", "engine perftest, bw: MsgRate", Index::none, no_perftest,
       perftest_table},
      {"perftest_t_min_us", "us", "engine perftest, lat: t_min", Index::none, no_perftest,
       perftest_table},
      {"perftest_t_max_us", "us", "engine perftest, lat: t_max (also lat_max_us)", Index::none,
       no_perftest, perftest_table},
      {"perftest_t_typical_us", "us",
       "engine perftest, lat: t_typical, the median (also lat_p50_us)", Index::none, no_perftest,
       perftest_table},
      {"perftest_t_avg_us", "us", "engine perftest, lat: t_avg", Index::none, no_perftest,
       perftest_table},
      {"perftest_t_stdev_us", "us", "engine perftest, lat: t_stdev", Index::none, no_perftest,
       perftest_table},
      {"perftest_t_p99_us", "us", "engine perftest, lat: 99% percentile (also lat_p99_us)",
       Index::none, no_perftest, perftest_table},
      {"perftest_t_p999_us", "us", "engine perftest, lat: 99.9% percentile", Index::none,
       no_perftest, perftest_table},
      // workload iperf3: background traffic that is not RDMA, as iperf3 measured it.
      {"iperf_gbps", "Gbit/s", "iperf3: the receiver's bits per second (all streams)", Index::none,
       iperf3_json, iperf3_json},
      {"iperf_loss_ratio", "",
       "iperf3 udp: datagrams lost / datagrams sent, at the receiver (lost_packets / packets)",
       Index::none, iperf3_json, iperf3_json},
      {"iperf_retransmits", "segments", "iperf3 tcp: segments the sender retransmitted",
       Index::none, iperf3_json, iperf3_json},
  };
  return metrics;
}

const MetricInfo* find_metric(std::string_view name) {
  for (const auto& m : known_metrics())
    if (m.name == name) return &m;
  return nullptr;
}

const std::vector<NameInfo>& known_names() {
  static const std::vector<NameInfo> names = {
      {"link_gbps", "the slowest link speed among the test's NICs (inventory)"},
      {"n", "ranks in the test case (NICs of the selected hosts)"},
      {"hosts", "hosts in the test case"},
      {"qps", "QPs per connection of the test case"},
      {"size", "the test case's message size in bytes"},
  };
  return names;
}

bool is_known_name(std::string_view name) {
  if (name.starts_with("baseline.")) return find_metric(name.substr(9)) != nullptr;
  return std::any_of(known_names().begin(), known_names().end(),
                     [&](const NameInfo& n) { return n.name == name; });
}

std::string_view nearest_metric(std::string_view name) {
  return nearest(known_metrics(), name);
}

std::string_view nearest_name(std::string_view name) {
  return nearest(known_names(), name);
}

Better better_when(std::string_view metric) {
  metric = metric.substr(0, metric.find('['));
  static constexpr std::string_view higher[] = {"busbw_gbps",
                                                "algbw_gbps",
                                                "capture_coverage",
                                                "fairness_jain",
                                                "perftest_bw_peak_gbps",
                                                "perftest_bw_average_gbps",
                                                "perftest_msg_rate_mpps",
                                                "iperf_gbps"};
  static constexpr std::string_view neither[] = {"cnp_reconciliation",
                                                 "pfc_reconciliation",
                                                 "switch_pfc_reconciliation",
                                                 "switch_mirror_reconciliation",
                                                 "nic_rx_bytes",
                                                 "nic_tx_bytes",
                                                 "calibration_rocehil",
                                                 "calibration_perftest",
                                                 "calibration_ratio",
                                                 "calibration_spread",
                                                 "link_gbps",
                                                 "n",
                                                 "hosts",
                                                 "qps",
                                                 "size"};
  if (std::find(std::begin(higher), std::end(higher), metric) != std::end(higher))
    return Better::higher;
  if (std::find(std::begin(neither), std::end(neither), metric) != std::end(neither) ||
      find_metric(metric) == nullptr)
    return Better::neither;
  // The rest count trouble or take time: latencies, retransmits, drops, pauses, CNPs, imbalance.
  return Better::lower;
}

}  // namespace rocehil::suites
