#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "rocehil/switches/varbind.hpp"

namespace rocehil::switches {

// A counter as the agent served it: its value and width, so a delta knows whether it may wrap.
struct Count {
  std::uint64_t value = 0;
  int bits = 64;
};

// One egress queue of a port (CISCO-SWITCH-QOS-MIB): packets sent and dropped, unicast and
// multicast summed; absent when the agent did not serve that statistic for the queue.
struct QueueCount {
  std::optional<Count> sent_packets, dropped_packets;
};

// The counters IF-MIB and the vendor MIBs give for one port. Absent (nullopt): the agent did not
// serve that column for this port; it is never read as 0.
struct PortCounters {
  std::uint32_t if_index = 0;
  std::string name;   // ifName
  std::string descr;  // ifDescr
  std::string alias;  // ifAlias
  std::optional<Count> in_octets, in_ucast, in_multicast, in_broadcast;
  std::optional<Count> out_octets, out_ucast, out_multicast, out_broadcast;
  std::optional<Count> in_discards, in_errors, out_discards, out_errors;
  // PFC frames per priority: received (the peer asked this port to pause) and sent.
  std::array<std::optional<Count>, 8> pfc_rx{}, pfc_tx{};
  // Packets the port's egress queues dropped (unicast and multicast, summed over queues).
  std::optional<Count> queue_drops;
  // Each egress queue the agent served, by its number (from 1): which class the traffic went
  // through and which queue dropped it.
  std::map<std::uint32_t, QueueCount> queues;
};

// One switch's counters at one moment, or why there are none.
struct SwitchSnapshot {
  std::string switch_name;
  std::string error;         // non-empty: the switch did not answer; nothing else is set
  std::int64_t unix_ns = 0;  // when the answer was complete
  double poll_seconds = 0;   // how long the walk took
  std::optional<std::uint64_t> uptime_ticks;  // sysUpTime, hundredths of a second
  std::string sys_name;
  bool pfc_served = false;          // any row of cpfcIfPriorityTable
  bool queues_served = false;       // any dropped-packets row of csqIfQosGroupStatsTable
  std::vector<PortCounters> ports;  // by ifIndex

  bool answered() const { return error.empty(); }
  // The port an inventory names: by ifName first, then ifDescr, then ifAlias; nullptr if none.
  const PortCounters* find_port(const std::string& name) const;
};

// The columns a counter snapshot walks (system, IF-MIB, PFC and queue tables).
const std::vector<Oid>& counter_columns();

// The few a port's traffic over time needs (sysUpTime, the ports' names, their 64-bit octets and
// discards): a case's switches polled every 100 ms while its traffic runs, at a tenth of the
// full walk's rows.
const std::vector<Oid>& traffic_columns();

// Builds a snapshot from the rows of counter_columns() one agent returned. Rows of unexpected
// type (a counter served as a string) are left out, as if not served.
SwitchSnapshot build_snapshot(const std::string& switch_name, const std::vector<Varbind>& rows);

}  // namespace rocehil::switches
