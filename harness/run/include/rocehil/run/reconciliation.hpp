#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "rocehil/inventory/inventory.hpp"
#include "rocehil/suites/threshold.hpp"

namespace rocehil::run {

// Capture = mirror = counters: the frames a case's mirror ports saw against what its NICs say
// they sent on the mirrored links (docs/suites.md, "Reconciliation"). Pure.

// Whether the case's capture points see every CNP that crosses racks, and how many copies.
struct SpineCoverage {
  std::optional<int> copies;  // 1 for one direction, 2 for `both`; empty: not every path seen
  std::string why;            // when empty `copies`
  std::map<std::string, std::string> rack_of;  // host -> rack
};
// Every link between a leaf of the hosts' racks and a spine must be in some capture point's
// `mirrors.links`, all mirrored in one kind of direction.
SpineCoverage spine_coverage(const inventory::Inventory& inventory,
                             const std::vector<std::string>& captures,
                             const std::vector<std::string>& hosts);

// A reconciliation's value (or why it has none) and its two sides, for the report.
struct Reconciliation {
  suites::Measured measured;
  std::optional<double> mirror;    // frames the mirror ports saw
  std::optional<double> nics;      // frames the NICs counted on the mirrored paths, x copies
  std::optional<double> switches;  // what the switches' own counters say (SNMP)
  nlohmann::json to_json() const;
};

// CNPs a host sent as a notification point. Per QP (`soft`): toward one `peer`. Per port (an
// RNIC's np_cnp_sent): toward all of `peers`, which cannot be told apart.
struct CnpsSent {
  std::string host;
  std::vector<std::string> peers;  // one: a per-QP count; several: a port's count
  double cnps = 0;
};

// cnp_reconciliation = mirror_cnps / (copies x CNPs sent toward another rack), with both sides
// in `sides` for the report. Absent with the reason when the mirrors do not see every path, a
// port's count mixes CNPs to its own rack and others, or no CNP crossed racks.
Reconciliation cnp_reconciliation(const SpineCoverage& coverage, const std::vector<CnpsSent>& sent,
                                  std::optional<double> mirror_cnps);

// A NIC whose link (inventory `nics[].link`) a capture point mirrors, with the pause frames its
// counters say it sent (tx) and received (rx) during the case, all priorities.
struct MirroredNicLink {
  std::string host, link, direction;         // direction of the mirror on the switch: ingress (from
                                             // the host), egress (to the host) or both
  std::optional<double> tx_pause, rx_pause;  // empty: the NIC has no such counter (all
                                             // priorities, or the one reconciled)
};
std::vector<MirroredNicLink> mirrored_nic_links(const inventory::Inventory& inventory,
                                                const std::vector<std::string>& captures,
                                                const std::vector<std::string>& hosts);
// pfc_reconciliation = mirror pfc_frames / the pause frames the NICs counted on mirrored links;
// per priority (`key` pfc_reconciliation[3]) from pfc_frames[3] and the links' counts of that
// priority alone.
Reconciliation pfc_reconciliation(const std::vector<MirroredNicLink>& links,
                                  std::optional<double> mirror_pfc_frames,
                                  const std::string& key = "pfc_reconciliation");

}  // namespace rocehil::run
