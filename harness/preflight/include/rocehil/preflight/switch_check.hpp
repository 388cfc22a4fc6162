#pragma once

#include <chrono>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "rocehil/inventory/inventory.hpp"
#include "rocehil/switches/cabling.hpp"
#include "rocehil/switches/poller.hpp"

namespace rocehil::preflight {

// One switch as `inventory check` found it over SNMP.
struct SwitchFacts {
  std::string name;
  std::string address;
  std::string error;  // did not answer (counters): nothing below is known
  std::string sys_name;
  std::size_t interfaces = 0;  // rows of IF-MIB
  bool pfc_served = false;
  bool queues_served = false;
  std::string lldp_error;  // LLDP-MIB not served or not answered
  std::size_t lldp_neighbors = 0;
  // Ports the inventory's links name on this switch that its IF-MIB does not list (by ifName,
  // ifDescr or ifAlias), one line each.
  std::vector<std::string> unknown_ports;
  bool answered() const { return error.empty(); }
};

struct SwitchCheckReport {
  std::vector<SwitchFacts> switches;  // every switch with snmp settings, in inventory order
  std::vector<switches::CablingFinding> cabling;
  std::string skipped;  // why nothing was checked (no switch has snmp settings), else empty
  double seconds = 0;
};

// Polls every switch with `snmp` settings at once: IF-MIB (the ports links name must exist),
// the vendor MIBs served, and LLDP against `links`. A switch that does not answer is asked
// again, once a second, until `wait_for_silent` has passed since the first poll (an agent just
// started, as after `testbed up`, answers within seconds), then reported, not thrown. Throws
// rocehil::Error (bad input) when a secret cannot be read.
SwitchCheckReport check_switches(
    const inventory::Inventory& inventory, const switches::PollerOptions& options = {},
    std::chrono::milliseconds wait_for_silent = std::chrono::milliseconds(10000));

// 0 all as designed, 1 a port is unknown or a cable differs from `links`, 3 a switch did not
// answer (the others are still checked).
int check_exit_code(const SwitchCheckReport& report);

nlohmann::json to_json(const SwitchCheckReport& report);

}  // namespace rocehil::preflight
