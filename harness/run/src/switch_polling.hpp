#pragma once

// The run's SNMP sessions to its switches, opened once for the whole run, and each case's
// before and after polls of the switches its traffic can cross.

#include <atomic>
#include <chrono>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "rocehil/inventory/inventory.hpp"
#include "rocehil/switches/delta.hpp"
#include "rocehil/switches/poller.hpp"

namespace rocehil::run {

class SwitchPolling {
 public:
  // Null when no switch has snmp settings. Throws rocehil::Error (bad input) when a secret
  // cannot be read: before any case runs.
  static std::unique_ptr<SwitchPolling> for_inventory(const inventory::Inventory& inventory);

  SwitchPolling(const inventory::Inventory& inventory, std::vector<switches::Target> targets,
                std::chrono::milliseconds wait_for_silent = std::chrono::milliseconds(10000));

  // The counters of the switches named. One that has not answered yet in this run (an agent
  // still starting) is waited for, once, within wait_for_silent (switches/late_agents.hpp).
  std::vector<switches::SwitchSnapshot> snapshot(const std::vector<std::string>& names);
  // Waits the longest counter_refresh_ms of `names` (so the counters show the case's last
  // packets), unless interrupted, then polls.
  std::vector<switches::SwitchSnapshot> snapshot_after_traffic(
      const std::vector<std::string>& names, const std::atomic<bool>* interrupt);

 private:
  const inventory::Inventory& inventory_;
  switches::Poller poller_;
  std::chrono::milliseconds wait_for_silent_;
  std::set<std::string> heard_;     // switches that have answered in this run
  std::set<std::string> given_up_;  // waited for once, in vain
};

// `after` minus `before`, switch by switch (both in the same order).
std::vector<switches::SwitchDelta> deltas(const std::vector<switches::SwitchSnapshot>& before,
                                          const std::vector<switches::SwitchSnapshot>& after);

}  // namespace rocehil::run
