#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace rocehil::traffic {

// A NIC's own counters, read before and after a case's traffic so that a run reports what the
// hardware counted (docs/metrics.md, the nic_* metrics). Not a hot path: a read is a few hundred
// small files and one ioctl.

// The NIC a case's traffic used on this host.
struct NicRef {
  std::string rdma_device;  // mlx5_0; empty when the provider uses none (soft)
  std::uint8_t port = 1;
  std::string netdev;  // eth1; empty when unknown
};

// One reading, keyed "SOURCE/NAME":
//   counters/NAME     <root>/sys/class/infiniband/DEV/ports/P/counters/NAME (IBTA port counters;
//                     port_xmit_data and port_rcv_data count 4-byte words)
//   hw_counters/NAME  <root>/sys/class/infiniband/DEV/ports/P/hw_counters/NAME (the driver's)
//   ethtool/NAME      the netdev's ETHTOOL_GSTATS statistics, as `ethtool -S` lists them
//   statistics/NAME   <root>/sys/class/net/NETDEV/statistics/NAME
//   netdev/carrier_down_count  <root>/sys/class/net/NETDEV/carrier_down_count: carrier losses
struct NicCounterSnapshot {
  NicRef nic;
  std::int64_t at_ns = 0;  // wall clock, Unix ns
  std::string firmware;    // <root>/sys/class/infiniband/DEV/fw_ver; empty without a device
  std::map<std::string, std::uint64_t> values;
  std::vector<std::string> problems;  // a source that could not be read, and why
  std::uint64_t speed_mbps = 0;       // the netdev's link speed; 0 when it does not say
};

struct NicCounterOptions {
  std::string root = "/";  // sysfs is read under it: a test points it at a tree of its own
  bool ethtool = true;     // the ioctl sees this process's network namespace, not `root`
};

// Never throws: what cannot be read is a problem in the snapshot, and its counters are absent.
NicCounterSnapshot read_nic_counters(const NicRef& nic, const NicCounterOptions& options = {});

// What the NIC counted between two readings.
struct NicCounterDelta {
  NicRef nic;
  double seconds = 0;
  std::map<std::string, std::uint64_t> deltas;  // counters read both times
  std::vector<std::string> reset;  // went backwards (a driver reload): no delta, named here
  std::map<std::string, std::string> reset_why;  // a reset's reason, where more than "backwards"
  std::vector<std::string> problems;             // both readings', without repeats
  // Why the NIC is known to have been reset between the readings (its firmware changed, or a
  // 64-bit counter went backwards); empty when nothing says so. Then no counter has a delta:
  // each one read both times is in `reset`, since one that counted again from zero past its old
  // value would give a delta as wrong as one that went backwards.
  std::string device_reset;
};

// after - before for every counter in both. mlx5's queue counters are 32 bits wide (the kernel
// reads them from a 32-bit firmware field), so one of those that went backwards either wrapped
// once or was reset with the NIC, which its value alone cannot tell. What else the NIC shows
// decides: a firmware version that changed, or a 64-bit counter of the device or its netdev that
// went backwards (neither wraps), means the NIC was reset (device_reset); otherwise the 32-bit
// counter wrapped and is unwrapped, when the wrap is possible: no more events than the packets
// the NIC sent and received meanwhile (its port, netdev or rxe packet counters), or without
// those, than its line rate carries in the interval (minimum frames both ways; 800 Gb/s when the
// netdev gives no speed). A wrap past that is a reset of that counter (reset_why says so), never
// billions of retransmits. Any other counter that went backwards was reset.
NicCounterDelta counter_delta(const NicCounterSnapshot& before, const NicCounterSnapshot& after);

// Whether `key` ("hw_counters/out_of_sequence") is one of mlx5's 32-bit queue counters.
bool is_32bit_counter(std::string_view key);

// ETHTOOL_GSTATS of a netdev in this process's network namespace: names (ETH_SS_STATS strings)
// and values, the first of a repeated name kept. Throws rocehil::Error naming the netdev and
// errno when the driver has no statistics or the netdev does not exist.
std::map<std::string, std::uint64_t> read_ethtool_stats(const std::string& netdev);

// The netdev holding `address` (an IPv4 or IPv6 literal) on this host, or empty.
std::string netdev_with_address(std::string_view address);

// The netdev behind an RDMA device (<root>/sys/class/infiniband/DEV/device/net/*), or empty.
std::string netdev_of_rdma_device(std::string_view device, std::string_view root = "/");

}  // namespace rocehil::traffic
