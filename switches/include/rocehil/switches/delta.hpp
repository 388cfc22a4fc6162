#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "rocehil/switches/snapshot.hpp"

namespace rocehil::switches {

// What one egress queue did between two snapshots.
struct QueueDelta {
  std::optional<std::uint64_t> sent_packets, dropped_packets;
};

// What one port did between two snapshots. A field is absent when either snapshot lacked it, or
// when its counter went backwards in a way that is not a 32-bit wrap (a reset): `notes` says
// which and why.
struct PortDelta {
  std::uint32_t if_index = 0;
  std::string name, descr, alias;  // as the snapshot's PortCounters
  std::optional<std::uint64_t> in_octets, in_packets, out_octets, out_packets;
  std::optional<std::uint64_t> in_discards, in_errors, out_discards, out_errors;
  std::array<std::optional<std::uint64_t>, 8> pfc_rx{}, pfc_tx{};
  std::optional<std::uint64_t> queue_drops;
  std::map<std::uint32_t, QueueDelta> queues;  // every queue both snapshots hold, by number
  std::vector<std::string> notes;

  // Discards of both directions plus queue drops; absent when none of them was served.
  std::optional<std::uint64_t> drops() const;
  std::optional<std::uint64_t> errors() const;
  bool any_activity_of_concern() const;  // drops, errors or PFC frames
};

struct SwitchDelta {
  std::string switch_name;
  std::string error;   // the switch did not answer before or after: no ports
  double seconds = 0;  // between the two snapshots
  bool pfc_served = false;
  bool queues_served = false;
  std::vector<PortDelta> ports;  // every port both snapshots hold, by ifIndex
  bool answered() const { return error.empty(); }
  const PortDelta* find_port(const std::string& name) const;
};

// `after` minus `before`. 32-bit counters that went backwards wrapped once (the polls of a case
// are seconds apart); 64-bit counters that went backwards, and every counter of an agent whose
// sysUpTime went backwards, were reset: those values are absent, with a note.
SwitchDelta delta(const SwitchSnapshot& before, const SwitchSnapshot& after);

}  // namespace rocehil::switches
