#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "rocehil/suites/threshold.hpp"
#include "rocehil/traffic/nic_counters.hpp"

namespace rocehil::run {

// The nic_* metrics of a case (docs/suites.md): the counter deltas each agent reported for the
// NIC its traffic used, per host, and summed over the case's hosts. Pure.

struct HostNic {
  std::string host;
  traffic::NicCounterDelta delta;
};

// One entry per distinct host and NIC (two ranks on one NIC count it once), in order.
std::vector<HostNic> distinct_nics(std::vector<HostNic> nics);

// Summed over `nics`; a metric is absent when any NIC lacks its counter (or it went backwards),
// with a reason naming host, NIC and counter, since a partial sum would read low.
suites::Measured nic_metrics(const std::vector<HostNic>& nics);

// The pause frames `host`'s NIC counted in `direction` ("tx" or "rx": ethtool
// tx_prioP_pause, rx_prioP_pause) on all priorities, or on `priority` alone; nothing when the
// host has no NIC in `nics` or its NIC lacks a counter (a veth, rxe).
std::optional<double> pause_frames(const std::vector<HostNic>& nics, const std::string& host,
                                   const char* direction,
                                   std::optional<int> priority = std::nullopt);

// For run.json: per host and NIC, the raw deltas (non-zero ones), resets, problems, and that
// NIC's own nic_* values, so a report can name the host whose NIC retransmitted.
nlohmann::json nics_json(const std::vector<HostNic>& nics);

}  // namespace rocehil::run
