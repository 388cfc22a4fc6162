#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "rocehil/inventory/inventory.hpp"
#include "rocehil/run/timeline_metrics.hpp"
#include "rocehil/suites/threshold.hpp"
#include "rocehil/switches/snapshot.hpp"

namespace rocehil::run {

// The traffic a case's switch ports sent over time, polled while it ran (SwitchSampler in
// src/metrics), against its fabric events: which links carried it before, during and after each
// event, and how soon the bytes the switches delivered to the case's hosts were back to their
// rate before it, measured by the fabric rather than by the agents. Pure.

// One poll of a case's switches (a snapshot per switch).
using SwitchSample = std::vector<switches::SwitchSnapshot>;

// A switch port at one end of an inventory link, sending toward the link's other end (`peer`).
struct FabricPort {
  std::string switch_name, port, link, peer;
  bool to_case_host = false;  // the peer is one of the case's hosts
};
// The switch ends of the inventory's links on the switches named, in inventory order.
std::vector<FabricPort> fabric_ports(const inventory::Inventory& inventory,
                                     const std::vector<std::string>& switch_names,
                                     const std::vector<std::string>& case_hosts);

// A port's octets sent (ifHCOutOctets) at each sample, counted from the first sample; nothing
// where its switch did not answer, served no such counter for it, or its counter went back (an
// agent that restarted): a gap, never 0.
struct PortSeries {
  FabricPort port;
  std::vector<std::int64_t> at_ns;  // Unix ns, when the switch's answer was complete
  std::vector<std::optional<double>> sent_bytes;
};
std::vector<PortSeries> port_series(const std::vector<FabricPort>& ports,
                                    const std::vector<SwitchSample>& samples);

// After an event, the first polling interval whose bytes sent to the case's hosts (their
// host-facing switch ports, summed) came to `share` of their rate over the second before the
// event; the recovery is when that interval begins. Known to a polling interval: an undisturbed
// flow reads as the time to the first poll after the event. Never back: the time to the last
// poll (`never`). Nothing (with `why`) when no poll saw the second before or the time after.
struct FabricRecovery {
  std::optional<double> ms;
  bool never = false;
  double rate_before_gbps = 0;
  std::string why;
};
FabricRecovery fabric_recovery_after(const std::vector<PortSeries>& series, std::int64_t event_ns,
                                     double share = 0.9);

// run.json's raw "switch_timeline": the polling period, `start_ns` (the traffic's start, as the
// agents' timelines and the events count from it), each port that carried traffic (its samples,
// ms from start_ns, and bytes), and per event its fabric recovery and the links that carried
// traffic (at least 5% of the case's delivered rate before the event, 1 Mbit/s at the least)
// before it, from it to the recovery, and after.
nlohmann::json switch_timeline_json(const std::vector<PortSeries>& series,
                                    const std::vector<EventTime>& events, double period_ms,
                                    std::int64_t start_ns);

// switch_recovery_ms from a switch_timeline_json: the longest recovery over its events, with
// the event it followed (and, when the traffic never came back, that it is at least that);
// absent with the reason when no event has a recovery read.
suites::Measured switch_recovery_metrics(const nlohmann::json& timeline);

}  // namespace rocehil::run
