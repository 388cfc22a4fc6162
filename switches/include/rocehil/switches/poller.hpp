#pragma once

#include <memory>
#include <string>
#include <vector>

#include "rocehil/inventory/inventory.hpp"
#include "rocehil/switches/access.hpp"
#include "rocehil/switches/lldp.hpp"
#include "rocehil/switches/snapshot.hpp"
#include "rocehil/switches/varbind.hpp"

namespace rocehil::switches {

// A switch to poll: its name, where its agent listens, and how to authenticate.
struct Target {
  std::string name;
  std::string address;  // IPv4, IPv6 or a DNS name
  SnmpCredentials credentials;
};

// The targets for every switch of an inventory that has `snmp` settings and an address (a switch
// without an address is polled by its name). Throws rocehil::Error (bad input) when a secret
// cannot be read, naming the switch.
std::vector<Target> targets_of(const inventory::Inventory& inventory,
                               const EnvLookup& env = process_environment());

// One switch's rows of a walk, or why it has none.
struct WalkResult {
  std::string switch_name;
  std::string error;
  std::vector<Varbind> rows;
  double seconds = 0;
  int requests = 0;
};

struct PollerOptions {
  // The whole poll (all switches at once) ends by then; a switch still walking gets an error
  // naming it. Each request's own timeout and retries come from the switch's settings.
  int deadline_ms = 15000;
  // Rows a GETBULK asks for per column; lowered by the poller when an agent answers tooBig.
  int bulk_rows = 25;
};

// SNMP sessions to many switches, polled all at once from one thread with net-snmp's single-
// session API (its v3 code is not thread-safe, so there are no threads). Sessions stay open
// between polls, so SNMPv3 engine discovery (synchronous in net-snmp 5.9, at open) happens once
// per switch and the before and after polls of a case cost one walk each.
class Poller {
 public:
  explicit Poller(std::vector<Target> targets, PollerOptions options = {});
  ~Poller();
  Poller(const Poller&) = delete;
  Poller& operator=(const Poller&) = delete;

  const std::vector<Target>& targets() const { return targets_; }

  // Walks `columns` (each a table column or a scalar's subtree) on every switch at once, or on
  // those named in `only` (then in the targets' order).
  std::vector<WalkResult> walk(const std::vector<Oid>& columns,
                               const std::vector<std::string>& only = {});
  // A snapshot of every switch (or those in `only`) from `columns`: the columns not walked are
  // absent from it, never 0.
  std::vector<SwitchSnapshot> counters(const std::vector<std::string>& only = {},
                                       const std::vector<Oid>& columns = counter_columns());
  std::vector<LldpView> lldp();

 private:
  struct Sessions;
  std::vector<Target> targets_;
  PollerOptions options_;
  std::unique_ptr<Sessions> sessions_;
};

}  // namespace rocehil::switches
