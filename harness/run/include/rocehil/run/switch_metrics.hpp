#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "rocehil/inventory/inventory.hpp"
#include "rocehil/run/reconciliation.hpp"
#include "rocehil/suites/threshold.hpp"
#include "rocehil/switches/delta.hpp"

namespace rocehil::run {

// The switch_* metrics of a case (docs/suites.md) from its switches' counter deltas, read over
// SNMP before and after the case. Pure.

// The switches a case's traffic can cross, in inventory order: those its hosts' NIC links end on,
// the leaves of its hosts' racks, and, when the hosts span racks, every spine and superspine.
// Only switches with snmp settings; when the hosts name no rack and no link, all of those.
std::vector<std::string> switches_in_scope(const inventory::Inventory& inventory,
                                           const std::vector<std::string>& hosts);

// switch_drops, switch_errors, switch_pfc_rx[p], switch_pfc_tx[p], switch_spine_imbalance, with
// `where` naming the switches and ports behind each non-zero sum. A metric is absent (with the
// switch and the reason) when a switch of the case did not answer or does not serve its
// counters, since a partial sum would read low.
suites::Measured switch_metrics(const inventory::Inventory& inventory,
                                const std::vector<switches::SwitchDelta>& deltas);

// Every switch_* metric absent: the run polls no switch (none has snmp settings, or
// --no-switches).
suites::Measured switches_not_polled();

// For run.json: per switch, the ports that carried traffic or dropped, errored or paused.
nlohmann::json switches_json(const std::vector<switches::SwitchDelta>& deltas);

// A host's NIC link that ends on a switch port, with the PFC frames the NIC says it sent.
struct HostSwitchPort {
  std::string host, link, switch_name, port;
  // All priorities, or the one reconciled; empty: the NIC has no such counter.
  std::optional<double> nic_tx_pause;
};
std::vector<HostSwitchPort> host_switch_ports(const inventory::Inventory& inventory,
                                              const std::vector<std::string>& hosts);

// switch_pfc_reconciliation = PFC frames the host-facing switch ports received / the PFC frames
// those hosts' NICs sent; with `priority`, switch_pfc_reconciliation[p]: the frames of that
// priority on both sides (the ports' nic_tx_pause being the NICs' count of it).
Reconciliation switch_pfc_reconciliation(const std::vector<HostSwitchPort>& ports,
                                         const std::vector<switches::SwitchDelta>& deltas,
                                         std::optional<int> priority = std::nullopt);

// A capture point's bytes and the spine ports it mirrors.
struct MirrorBytes {
  std::string point;
  std::optional<double> bytes;  // every frame it kept; empty: its filter kept only some
};
// switch_mirror_reconciliation = bytes the mirror ports saw / octets the mirrored switch ports
// carried in the mirrored direction.
Reconciliation switch_mirror_reconciliation(const inventory::Inventory& inventory,
                                            const std::vector<MirrorBytes>& mirrors,
                                            const std::vector<switches::SwitchDelta>& deltas);

}  // namespace rocehil::run
