#pragma once

// An SNMP agent that has just started (a switch rebooting, the testbed's snmpd coming up) answers
// nothing for a moment. Before a switch is called silent it is asked again, only its sysName,
// once a second: a full walk of an agent still starting would queue requests that it answers
// long after they were given up on.

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "rocehil/switches/poller.hpp"

namespace rocehil::switches {

// Waits for the switches of `snapshots` that did not answer and that `waits_for` picks, until
// each has answered or `give_up` has passed: a switch that answers its sysName has its counters
// read again and its snapshot replaced. Returns the names still silent (in `snapshots`' order).
std::vector<std::string> wait_for_late_agents(
    Poller& poller, std::vector<SwitchSnapshot>& snapshots,
    const std::function<bool(const SwitchSnapshot&)>& waits_for,
    std::chrono::steady_clock::time_point give_up);

}  // namespace rocehil::switches
