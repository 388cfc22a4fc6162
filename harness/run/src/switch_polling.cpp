#include "switch_polling.hpp"

#include <algorithm>
#include <chrono>
#include <thread>

namespace rocehil::run {

std::unique_ptr<SwitchPolling> SwitchPolling::for_inventory(const inventory::Inventory& inventory) {
  auto targets = switches::targets_of(inventory);
  if (targets.empty()) return nullptr;
  return std::make_unique<SwitchPolling>(inventory, std::move(targets));
}

SwitchPolling::SwitchPolling(const inventory::Inventory& inventory,
                             std::vector<switches::Target> targets)
    : inventory_(inventory), poller_(std::move(targets)) {}

std::vector<switches::SwitchSnapshot> SwitchPolling::snapshot(
    const std::vector<std::string>& names) {
  if (names.empty()) return {};
  return poller_.counters(names);
}

std::vector<switches::SwitchSnapshot> SwitchPolling::snapshot_after_traffic(
    const std::vector<std::string>& names, const std::atomic<bool>* interrupt) {
  int wait_ms = 0;
  for (const auto& name : names)
    if (const inventory::Switch* s = inventory_.find_switch(name); s && s->snmp)
      wait_ms = std::max(wait_ms, s->snmp->counter_refresh_ms);
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
