#pragma once

// What a test's events (suites::Event) do to the fabric while its traffic runs, as a case attempt
// reaches it: links and hosts' NICs taken down and brought up, and commands the inventory names.
// The attempt times the events; the run gives it the means (FabricEvents, fabric_events.hpp),
// which journals what it takes down.

#include <string>
#include <vector>

#include "rocehil/inventory/inventory.hpp"
#include "rocehil/suites/suite.hpp"

namespace rocehil::run {

// Something taken down and brought up again by bring_up_all, or why it could not be.
struct BroughtUp {
  std::string what;   // "link l1-s1", "host h3"
  std::string did;    // the command run, in words
  std::string error;  // empty: it is up
};

class FabricActions {
 public:
  virtual ~FabricActions() = default;
  // Each does what the event asks and returns what it ran, in words, for run.json. Throws
  // rocehil::Error naming the link, host or switch and the reason when it could not.
  // A link or NIC taken down is journaled first, and its entry cleared once it is up again.
  virtual std::string link(const std::string& link, bool up) = 0;
  virtual std::string nic(const std::string& host, bool up) = 0;
  // The inventory's command `event.command` of event.host or event.switch_name.
  virtual std::string command(const suites::Event& event) = 0;
  // Everything taken down through this object and not brought up since, brought up.
  virtual std::vector<BroughtUp> bring_up_all() = 0;
};

// Why `event` cannot run on `inventory`, for a message after "test 'x': event ACTION: "; empty
// when it can: the link, host, switch or command the inventory lacks, a link whose ends no
// switch can take down (neither a testbed's namespace nor link_down/link_up), a host without a
// NIC. pfc events are injection_command's (suite_check.hpp).
std::string event_problem(const suites::Event& event, const inventory::Inventory& inventory);

}  // namespace rocehil::run
