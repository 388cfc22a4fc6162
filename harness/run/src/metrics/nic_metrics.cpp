#include "rocehil/run/nic_metrics.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <optional>

namespace rocehil::run {

namespace {

// A metric and the counters it adds up on one NIC. `any_of`: the sum of those the NIC has
// (absent only when it has none); otherwise every counter is needed. `scale` turns IBTA's
// 4-byte words into bytes.
struct NicMetric {
  std::string key;
  std::vector<std::string> counters;
  bool any_of = false;
  double scale = 1;
};

// Soft-RoCE (rdma_rxe) builds its packets in the kernel's UDP stack and sends them through its
// netdev, which counts them; it has no IBTA port counters, only its own hw_counters (sent_pkts
// among them). An RNIC's RoCE bypasses the netdev.
bool roce_through_netdev(const traffic::NicCounterDelta& d) {
  return !d.nic.rdma_device.empty() && !d.deltas.contains("counters/port_rcv_data") &&
         d.deltas.contains("hw_counters/sent_pkts");
}

// Where two drivers name one event differently (mlx5's first, then rxe's: rxe_hw_counters.c),
// the metric is any_of: a NIC has one name or the other, never both.
std::vector<NicMetric> metrics_for(const traffic::NicRef& nic, bool through_netdev = false) {
  std::vector<NicMetric> m = {
      {"nic_cnps_sent", {"hw_counters/np_cnp_sent"}},
      {"nic_cnps_handled", {"hw_counters/rp_cnp_handled"}},
      {"nic_ecn_marked", {"hw_counters/np_ecn_marked_roce_packets"}},
      {"nic_out_of_sequence",
       {"hw_counters/out_of_sequence", "hw_counters/out_of_seq_request"},
       true},
      {"nic_seq_errors", {"hw_counters/packet_seq_err", "hw_counters/rcvd_seq_err"}, true},
      {"nic_ack_timeouts", {"hw_counters/local_ack_timeout_err"}},
      // rxe's completer_retry_err counts the go-back-N restarts it starts, after an ACK timeout
      // or a sequence-error NAK alike (rxe_comp.c), so its rcvd_seq_err is not added again.
      {"nic_retransmits",
       {"hw_counters/roce_adp_retrans", "hw_counters/packet_seq_err",
        "hw_counters/completer_retry_err"},
       true},
      {"nic_discards", {"ethtool/rx_discards_phy"}},
      {"nic_out_of_buffer", {"hw_counters/out_of_buffer"}},
  };
  for (int p = 0; p < 8; ++p) {
    m.push_back({fmt::format("nic_rx_pause[{}]", p), {fmt::format("ethtool/rx_prio{}_pause", p)}});
    m.push_back({fmt::format("nic_tx_pause[{}]", p), {fmt::format("ethtool/tx_prio{}_pause", p)}});
    m.push_back({fmt::format("nic_pause_duration_us[{}]", p),
                 {fmt::format("ethtool/rx_prio{}_pause_duration", p)}});
    // A priority's share of the port (mlx5 en_stats.c's per-priority traffic group: the PHY's
    // octets by PCP, RoCE included); rx_prio<p>_discards only from kernels that read it.
    m.push_back({fmt::format("nic_rx_bytes[{}]", p), {fmt::format("ethtool/rx_prio{}_bytes", p)}});
    m.push_back({fmt::format("nic_tx_bytes[{}]", p), {fmt::format("ethtool/tx_prio{}_bytes", p)}});
    m.push_back(
        {fmt::format("nic_discards[{}]", p), {fmt::format("ethtool/rx_prio{}_discards", p)}});
  }
  // RoCE on an RNIC bypasses the netdev's own statistics: its bytes are the RDMA port's.
  if (!nic.rdma_device.empty() && !through_netdev) {
    m.push_back({"nic_rx_bytes", {"counters/port_rcv_data"}, false, 4});
    m.push_back({"nic_tx_bytes", {"counters/port_xmit_data"}, false, 4});
  } else {
    m.push_back({"nic_rx_bytes", {"statistics/rx_bytes"}});
    m.push_back({"nic_tx_bytes", {"statistics/tx_bytes"}});
  }
  return m;
}

std::string nic_name(const traffic::NicRef& nic) {
  if (nic.rdma_device.empty()) return nic.netdev.empty() ? "its NIC" : nic.netdev;
  return fmt::format("{} port {}{}", nic.rdma_device, nic.port,
                     nic.netdev.empty() ? "" : " (" + nic.netdev + ")");
}

// The metric's value on one NIC, or why it has none.
std::optional<double> value_on(const NicMetric& m, const HostNic& h, std::string& why) {
  double sum = 0;
  int found = 0;
  for (const std::string& counter : m.counters) {
    const auto it = h.delta.deltas.find(counter);
    if (it != h.delta.deltas.end()) {
      sum += static_cast<double>(it->second);
      ++found;
      continue;
    }
    const bool reset =
        std::find(h.delta.reset.begin(), h.delta.reset.end(), counter) != h.delta.reset.end();
    // A counter the NIC may lack is left out of an any_of sum; one it has but that was reset
    // leaves the sum unknown.
    if (m.any_of && !reset) continue;
    if (!h.delta.device_reset.empty()) {
      why = fmt::format("{} {} was reset during the case ({}), so its counters have no delta",
                        h.host, nic_name(h.delta.nic), h.delta.device_reset);
      return std::nullopt;
    }
    const bool no_rdma = h.delta.nic.rdma_device.empty() &&
                         (counter.starts_with("hw_counters/") || counter.starts_with("counters/"));
    const auto reason = h.delta.reset_why.find(counter);
    why = reset && reason != h.delta.reset_why.end()
              ? fmt::format("{} {}: {}", h.host, nic_name(h.delta.nic), reason->second)
          : reset ? fmt::format(
                        "{} {}: {} went backwards during the case (a reset), so it has no "
                        "delta",
                        h.host, nic_name(h.delta.nic), counter)
                  : fmt::format("{} {} has no counter {}{}", h.host, nic_name(h.delta.nic), counter,
                                no_rdma ? " (its provider uses no RDMA device)" : "");
    return std::nullopt;
  }
  if (found == 0) {
    why = fmt::format("{} {} has none of {}", h.host, nic_name(h.delta.nic),
                      fmt::join(m.counters, ", "));
    return std::nullopt;
  }
  return sum * m.scale;
}

}  // namespace

std::vector<HostNic> distinct_nics(std::vector<HostNic> nics) {
  std::vector<HostNic> out;
  for (auto& n : nics) {
    const bool seen = std::any_of(out.begin(), out.end(), [&](const HostNic& o) {
      return o.host == n.host && o.delta.nic.rdma_device == n.delta.nic.rdma_device &&
             o.delta.nic.port == n.delta.nic.port && o.delta.nic.netdev == n.delta.nic.netdev;
    });
    if (!seen) out.push_back(std::move(n));
  }
  return out;
}

suites::Measured nic_metrics(const std::vector<HostNic>& nics) {
  suites::Measured m;
  const std::vector<NicMetric> names = metrics_for({});
  if (nics.empty()) {
    for (const NicMetric& metric : names)
      m.absent(metric.key,
               "the agents reported no NIC counters (an agent older than this rocehil: "
               "rocehil run --deploy)");
    return m;
  }
  // Each NIC's own definitions (an RNIC's bytes are its RDMA port's), in the same order.
  std::vector<std::vector<NicMetric>> per_nic;
  per_nic.reserve(nics.size());
  for (const HostNic& h : nics)
    per_nic.push_back(metrics_for(h.delta.nic, roce_through_netdev(h.delta)));
  for (std::size_t i = 0; i < names.size(); ++i) {
    double sum = 0;
    std::string why;
    for (std::size_t n = 0; n < nics.size(); ++n) {
      const auto v = value_on(per_nic[n][i], nics[n], why);
      if (!v) break;
      sum += *v;
    }
    if (why.empty())
      m.values[names[i].key] = sum;
    else
      m.absent(names[i].key, why);
  }
  return m;
}

nlohmann::json nics_json(const std::vector<HostNic>& nics) {
  nlohmann::json out = nlohmann::json::array();
  for (const HostNic& h : nics) {
    nlohmann::json deltas = nlohmann::json::object();
    for (const auto& [key, value] : h.delta.deltas)
      if (value != 0) deltas[key] = value;
    nlohmann::json metrics = nlohmann::json::object();
    for (const NicMetric& metric : metrics_for(h.delta.nic, roce_through_netdev(h.delta))) {
      std::string why;
      if (const auto v = value_on(metric, h, why)) metrics[metric.key] = *v;
    }
    out.push_back(
        {{"host", h.host},
         {"device", h.delta.nic.rdma_device},
         {"port", h.delta.nic.port},
         {"netdev", h.delta.nic.netdev},
         {"seconds", h.delta.seconds},
         {"metrics", metrics},
         {"deltas", deltas},
         {"counters_read", h.delta.deltas.size()},
         {"reset", h.delta.reset},
         {"device_reset", h.delta.device_reset.empty() ? nlohmann::json(nullptr)
                                                       : nlohmann::json(h.delta.device_reset)},
         {"problems", h.delta.problems}});
  }
  return out;
}

std::optional<double> pause_frames(const std::vector<HostNic>& nics, const std::string& host,
                                   const char* direction, std::optional<int> priority) {
  for (const HostNic& n : nics) {
    if (n.host != host) continue;
    double sum = 0;
    for (int p = 0; p < 8; ++p) {
      if (priority && p != *priority) continue;
      const auto it = n.delta.deltas.find(fmt::format("ethtool/{}_prio{}_pause", direction, p));
      if (it == n.delta.deltas.end()) return std::nullopt;
      sum += static_cast<double>(it->second);
    }
    return sum;
  }
  return std::nullopt;
}

}  // namespace rocehil::run
