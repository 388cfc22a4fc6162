#include "rocehil/traffic/nic_counters.hpp"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <ifaddrs.h>
#include <netinet/in.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <system_error>

#include "rocehil/common/error.hpp"

namespace rocehil::traffic {

namespace fs = std::filesystem;

namespace {

// Files of a counter directory that are not counters. hw_counters/lifespan is the milliseconds
// the driver caches its readings (writable, a number like the rest).
bool is_setting(std::string_view source, std::string_view name) {
  return source == "hw_counters" && name == "lifespan";
}

// The count a sysfs file holds; nullopt when it is missing, unreadable (write-only) or text.
std::optional<std::uint64_t> read_count(const fs::path& path) {
  std::ifstream file(path);
  std::string text;
  if (!file || !std::getline(file, text)) return std::nullopt;
  std::uint64_t value = 0;
  const auto [end, parse_error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (parse_error != std::errc{} || end == text.data()) return std::nullopt;
  return value;
}

// Adds every counter file of `directory` as "source/name"; false when it cannot be listed.
bool read_directory(const fs::path& directory, std::string_view source,
                    std::map<std::string, std::uint64_t>& values) {
  std::error_code error;
  fs::directory_iterator it(directory, error);
  if (error) return false;
  for (const fs::directory_entry& entry : it) {
    const std::string name = entry.path().filename().string();
    if (is_setting(source, name) || !entry.is_regular_file(error)) continue;
    if (const auto value = read_count(entry.path()))
      values[fmt::format("{}/{}", source, name)] = *value;
  }
  return true;
}

fs::path under(const std::string& root, const fs::path& path) {
  return fs::path(root) / path.relative_path();
}

std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// mlx5's queue counters (drivers/infiniband/hw/mlx5/counters.c, INIT_Q_COUNTER): read from the
// 32-bit fields of QUERY_Q_COUNTER. Its congestion counters (np_*, rp_*) and rx_icrc_encapsulated
// are 64-bit, as are the IBTA extended port counters and every ethtool and netdev statistic.
constexpr std::string_view mlx5_q_counters[] = {
    "duplicate_request",
    "implied_nak_seq_err",
    "local_ack_timeout_err",
    "out_of_buffer",
    "out_of_sequence",
    "packet_seq_err",
    "req_cqe_error",
    "req_cqe_flush_error",
    "req_remote_access_errors",
    "req_remote_invalid_request",
    "req_rnr_retries_exceeded",
    "req_transport_retries_exceeded",
    "resp_cqe_error",
    "resp_cqe_flush_error",
    "resp_local_length_error",
    "resp_remote_access_errors",
    "rnr_nak_retry_err",
    "roce_adp_retrans",
    "roce_adp_retrans_to",
    "roce_slow_restart",
    "roce_slow_restart_cnps",
    "roce_slow_restart_trans",
    "rx_atomic_requests",
    "rx_dct_connect",
    "rx_read_requests",
    "rx_write_requests",
};

void add_problem(std::vector<std::string>& problems, const std::string& p) {
  if (std::find(problems.begin(), problems.end(), p) == problems.end()) problems.push_back(p);
}

// The most events a 32-bit counter can have counted in the interval, and what says so.
struct WrapBound {
  double most = 0;
  std::string what;
};

WrapBound wrap_bound(const NicCounterDelta& d, std::uint64_t speed_mbps) {
  // The NIC's packets both ways, by the largest of its counters that were read both times.
  constexpr std::pair<std::string_view, std::string_view> packet_counters[] = {
      {"counters/port_xmit_packets", "counters/port_rcv_packets"},
      {"statistics/tx_packets", "statistics/rx_packets"},
      {"hw_counters/sent_pkts", "hw_counters/rcvd_pkts"}};
  std::optional<std::uint64_t> packets;
  std::string named;
  for (const auto& [sent, received] : packet_counters) {
    std::uint64_t sum = 0;
    bool any = false;
    for (const std::string_view key : {sent, received})
      if (const auto it = d.deltas.find(std::string(key)); it != d.deltas.end()) {
        sum += it->second;
        any = true;
      }
    if (any && (!packets || sum > *packets)) {
      packets = sum;
      named = fmt::format("{} + {}", sent, received);
    }
  }
  if (packets)
    return {static_cast<double>(*packets),
            fmt::format("the {} packets the NIC sent and received ({})", *packets, named)};
  // Minimum frames (64 bytes, and 20 of preamble and gap) at line rate, both ways.
  const double mbps = speed_mbps != 0 ? static_cast<double>(speed_mbps) : 800'000;
  const double most = 2 * std::max(d.seconds, 0.0) * mbps * 1e6 / (84 * 8);
  return {most, fmt::format("the {:.4g} minimum frames {} carries both ways in that time", most,
                            speed_mbps != 0 ? fmt::format("its {} Mb/s link", speed_mbps)
                                            : std::string("an 800 Gb/s link"))};
}

}  // namespace

bool is_32bit_counter(std::string_view key) {
  constexpr std::string_view prefix = "hw_counters/";
  if (!key.starts_with(prefix)) return false;
  key.remove_prefix(prefix.size());
  return std::find(std::begin(mlx5_q_counters), std::end(mlx5_q_counters), key) !=
         std::end(mlx5_q_counters);
}

NicCounterSnapshot read_nic_counters(const NicRef& nic, const NicCounterOptions& options) {
  NicCounterSnapshot s;
  s.nic = nic;
  s.at_ns = now_ns();
  if (!nic.rdma_device.empty()) {
    const fs::path device = under(options.root, "/sys/class/infiniband") / nic.rdma_device;
    if (std::ifstream in(device / "fw_ver"); in) std::getline(in, s.firmware);
    const fs::path port = device / "ports" / std::to_string(nic.port);
    for (const char* source : {"counters", "hw_counters"})
      if (!read_directory(port / source, source, s.values))
        s.problems.push_back(fmt::format("{} port {} has no {}/ ({})", nic.rdma_device, nic.port,
                                         source, (port / source).string()));
  }
  if (!nic.netdev.empty()) {
    const fs::path netdev = under(options.root, "/sys/class/net") / nic.netdev;
    const fs::path stats = netdev / "statistics";
    if (!read_directory(stats, "statistics", s.values))
      s.problems.push_back(fmt::format("{} has no statistics/ ({})", nic.netdev, stats.string()));
    // Times the link lost its carrier (Linux >= 4.16): a cable, port or NIC that went down during
    // a case, which is the broken end of a transport error.
    if (const auto down = read_count(netdev / "carrier_down_count"))
      s.values.emplace("netdev/carrier_down_count", *down);
    // A down link or a veth says -1, which read_count refuses: then the speed is unknown.
    if (const auto speed = read_count(netdev / "speed")) s.speed_mbps = *speed;
    if (options.ethtool) {
      try {
        for (auto& [name, value] : read_ethtool_stats(nic.netdev))
          s.values.emplace("ethtool/" + name, value);
      } catch (const std::exception& e) {
        s.problems.push_back(e.what());
      }
    }
  }
  return s;
}

NicCounterDelta counter_delta(const NicCounterSnapshot& before, const NicCounterSnapshot& after) {
  NicCounterDelta d;
  d.nic = after.nic;
  d.seconds = static_cast<double>(after.at_ns - before.at_ns) / 1e9;
  for (const auto& p : before.problems) add_problem(d.problems, p);
  for (const auto& p : after.problems) add_problem(d.problems, p);
  if (!before.firmware.empty() && !after.firmware.empty() && before.firmware != after.firmware)
    d.device_reset =
        fmt::format("its firmware changed from {} to {}", before.firmware, after.firmware);
  std::vector<std::pair<std::string, std::string>> wrapped;  // key, "from X to Y"
  for (const auto& [key, then] : before.values) {
    const auto it = after.values.find(key);
    if (it == after.values.end()) continue;
    const std::uint64_t now = it->second;
    if (now >= then) {
      d.deltas[key] = now - then;
    } else if (is_32bit_counter(key) && then <= 0xFFFFFFFFu) {
      d.deltas[key] = (std::uint64_t{1} << 32) - then + now;  // a wrap, unless the NIC reset
      wrapped.emplace_back(key, fmt::format("from {} to {}", then, now));
    } else {
      d.reset.push_back(key);
      // ethtool's list holds a few gauges besides its counters: only the device's own counters
      // and the netdev's statistics say the NIC was reset.
      if (d.device_reset.empty() && !key.starts_with("ethtool/"))
        d.device_reset = fmt::format("{} went backwards, from {} to {}", key, then, now);
    }
  }
  if (!d.device_reset.empty()) {
    for (const auto& [key, delta] : d.deltas) d.reset.push_back(key);
    d.deltas.clear();
    std::sort(d.reset.begin(), d.reset.end());
    return d;
  }
  if (!wrapped.empty()) {
    const WrapBound bound = wrap_bound(d, after.speed_mbps);
    for (const auto& [key, from_to] : wrapped) {
      const std::uint64_t events = d.deltas.at(key);
      if (static_cast<double>(events) <= bound.most) continue;
      d.deltas.erase(key);
      d.reset.push_back(key);
      d.reset_why[key] = fmt::format(
          "{} went backwards ({}); a 32-bit wrap would mean {} in {:.3g} s, more than {}, so it "
          "was reset",
          key, from_to, events, d.seconds, bound.what);
    }
    std::sort(d.reset.begin(), d.reset.end());
  }
  return d;
}

std::string netdev_with_address(std::string_view address) {
  in6_addr want6{};
  in_addr want4{};
  const std::string text(address);
  const bool v4 = inet_pton(AF_INET, text.c_str(), &want4) == 1;
  const bool v6 = !v4 && inet_pton(AF_INET6, text.c_str(), &want6) == 1;
  if (!v4 && !v6) return "";
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return "";
  std::string found;
  for (const ifaddrs* i = list; i != nullptr && found.empty(); i = i->ifa_next) {
    if (i->ifa_addr == nullptr) continue;
    if (v4 && i->ifa_addr->sa_family == AF_INET &&
        std::memcmp(&reinterpret_cast<const sockaddr_in*>(i->ifa_addr)->sin_addr, &want4,
                    sizeof want4) == 0)
      found = i->ifa_name;
    if (v6 && i->ifa_addr->sa_family == AF_INET6 &&
        std::memcmp(&reinterpret_cast<const sockaddr_in6*>(i->ifa_addr)->sin6_addr, &want6,
                    sizeof want6) == 0)
      found = i->ifa_name;
  }
  freeifaddrs(list);
  return found;
}

std::string netdev_of_rdma_device(std::string_view device, std::string_view root) {
  std::error_code error;
  const fs::path net =
      under(std::string(root), "/sys/class/infiniband") / device / "device" / "net";
  for (const fs::directory_entry& entry : fs::directory_iterator(net, error))
    return entry.path().filename().string();
  return "";
}

}  // namespace rocehil::traffic
