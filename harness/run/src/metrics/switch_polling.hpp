#pragma once

// The run's SNMP sessions to its switches, opened once for the whole run, and each case's
// before and after polls of the switches its traffic can cross.

#include <atomic>
#include <chrono>
#include <exception>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
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
  // The ports' octets and discards of the switches named (switches::traffic_columns()), nothing
  // waited for: a sample of the traffic while it runs.
  std::vector<switches::SwitchSnapshot> traffic(const std::vector<std::string>& names);
  // The longest counter_refresh_ms of `names`: polling faster only reads the same values again.
  int counter_refresh_ms(const std::vector<std::string>& names) const;

 private:
  std::mutex mutex_;  // the poller is one thread's at a time (net-snmp's single-session API)
  const inventory::Inventory& inventory_;
  switches::Poller poller_;
  std::chrono::milliseconds wait_for_silent_;
  std::set<std::string> heard_;     // switches that have answered in this run
  std::set<std::string> given_up_;  // waited for once, in vain
};

// One case's poll of its switches before its traffic, on a thread of its own: the switches are
// read while the case's captures and agents start (each about as long as the poll: ssh sessions
// and processes), and the poll is waited for before any agent may send a packet.
class SwitchesBefore {
 public:
  SwitchesBefore() = default;  // nothing to poll
  SwitchesBefore(SwitchPolling& polling, std::vector<std::string> names);

  // The counters read; throws what the poll threw. The first call waits, later ones return the
  // same reading (a calibration's runs each call it).
  const std::vector<switches::SwitchSnapshot>& wait();
  bool begun() const { return begun_; }
  bool waited() const { return snapshot_.has_value(); }

 private:
  bool begun_ = false;
  std::future<std::vector<switches::SwitchSnapshot>> poll_;
  std::optional<std::vector<switches::SwitchSnapshot>> snapshot_;
  std::exception_ptr failure_;  // what the poll threw, thrown again by each wait
};

// `after` minus `before`, switch by switch (both in the same order).
std::vector<switches::SwitchDelta> deltas(const std::vector<switches::SwitchSnapshot>& before,
                                          const std::vector<switches::SwitchSnapshot>& after);

}  // namespace rocehil::run
