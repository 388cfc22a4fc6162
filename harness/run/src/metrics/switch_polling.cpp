#include "metrics/switch_polling.hpp"

#include <algorithm>
#include <chrono>
#include <exception>
#include <thread>

#include "rocehil/switches/late_agents.hpp"

namespace rocehil::run {

std::unique_ptr<SwitchPolling> SwitchPolling::for_inventory(const inventory::Inventory& inventory) {
  auto targets = switches::targets_of(inventory);
  if (targets.empty()) return nullptr;
  return std::make_unique<SwitchPolling>(inventory, std::move(targets));
}

SwitchPolling::SwitchPolling(const inventory::Inventory& inventory,
                             std::vector<switches::Target> targets,
                             std::chrono::milliseconds wait_for_silent)
    : inventory_(inventory), poller_(std::move(targets)), wait_for_silent_(wait_for_silent) {}

std::vector<switches::SwitchSnapshot> SwitchPolling::snapshot(
    const std::vector<std::string>& names) {
  if (names.empty()) return {};
  const std::lock_guard lock(mutex_);
  auto snapshots = poller_.counters(names);
  // A switch not heard from yet in this run may be an agent still starting: waited for, once,
  // within wait_for_silent; one that answered before and is silent now is not (it says so).
  const auto waits_for = [this](const switches::SwitchSnapshot& s) {
    return !heard_.contains(s.switch_name) && !given_up_.contains(s.switch_name);
  };
  for (const auto& name : switches::wait_for_late_agents(
           poller_, snapshots, waits_for, std::chrono::steady_clock::now() + wait_for_silent_))
    given_up_.insert(name);
  for (const auto& s : snapshots)
    if (s.answered()) heard_.insert(s.switch_name);
  return snapshots;
}

SwitchesBefore::SwitchesBefore(SwitchPolling& polling, std::vector<std::string> names)
    : begun_(true), poll_(std::async(std::launch::async, [&polling, names = std::move(names)] {
        return polling.snapshot(names);
      })) {}

const std::vector<switches::SwitchSnapshot>& SwitchesBefore::wait() {
  if (snapshot_) return *snapshot_;
  if (failure_) std::rethrow_exception(failure_);
  if (!begun_) return snapshot_.emplace();
  try {
    snapshot_ = poll_.get();
  } catch (...) {
    failure_ = std::current_exception();
    throw;
  }
  return *snapshot_;
}

std::vector<switches::SwitchSnapshot> SwitchPolling::traffic(
    const std::vector<std::string>& names) {
  if (names.empty()) return {};
  const std::lock_guard lock(mutex_);
  return poller_.counters(names, switches::traffic_columns());
}

int SwitchPolling::counter_refresh_ms(const std::vector<std::string>& names) const {
  int ms = 0;
  for (const auto& name : names)
    if (const inventory::Switch* s = inventory_.find_switch(name); s && s->snmp)
      ms = std::max(ms, s->snmp->counter_refresh_ms);
  return ms;
}

std::vector<switches::SwitchSnapshot> SwitchPolling::snapshot_after_traffic(
    const std::vector<std::string>& names, const std::atomic<bool>* interrupt) {
  const int wait_ms = counter_refresh_ms(names);
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(wait_ms);
  while (std::chrono::steady_clock::now() < until && !(interrupt && interrupt->load()))
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  return snapshot(names);
}

std::vector<switches::SwitchDelta> deltas(const std::vector<switches::SwitchSnapshot>& before,
                                          const std::vector<switches::SwitchSnapshot>& after) {
  std::vector<switches::SwitchDelta> out;
  for (std::size_t i = 0; i < before.size() && i < after.size(); ++i)
    out.push_back(switches::delta(before[i], after[i]));
  return out;
}

}  // namespace rocehil::run
