#pragma once

#include <nlohmann/json.hpp>

#include "rocehil/switches/delta.hpp"
#include "rocehil/switches/snapshot.hpp"

namespace rocehil::switches {

// A port's counters as JSON, null where the switch does not serve one (never 0): as they stand
// (`rocehil switches poll --json`), and what they did during a case (run.json's raw.switches).
// Both carry if_index, in/out octets, discards and errors, queue_drops, `queues` (each egress
// queue served: queue, sent_packets, dropped_packets) and pfc_rx/pfc_tx (eight
// priorities); a snapshot adds name, descr and the unicast packets, a delta the port's name as
// `port`, packets of all kinds and its notes.
nlohmann::json to_json(const PortCounters& port);
nlohmann::json to_json(const PortDelta& port);

}  // namespace rocehil::switches
