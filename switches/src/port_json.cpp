#include "rocehil/switches/port_json.hpp"

namespace rocehil::switches {

namespace {

nlohmann::json value_json(const std::optional<Count>& c) {
  return c ? nlohmann::json(c->value) : nlohmann::json(nullptr);
}
nlohmann::json value_json(const std::optional<std::uint64_t>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

// The fields a snapshot's port and a delta's port share, by the same names.
template <typename Port>
nlohmann::json common_json(const Port& p) {
  nlohmann::json j{{"if_index", p.if_index}};
  j["in_octets"] = value_json(p.in_octets);
  j["out_octets"] = value_json(p.out_octets);
  j["in_discards"] = value_json(p.in_discards);
  j["out_discards"] = value_json(p.out_discards);
  j["in_errors"] = value_json(p.in_errors);
  j["out_errors"] = value_json(p.out_errors);
  j["queue_drops"] = value_json(p.queue_drops);
  j["queues"] = nlohmann::json::array();
  for (const auto& [queue, q] : p.queues)
    j["queues"].push_back({{"queue", queue},
                           {"sent_packets", value_json(q.sent_packets)},
                           {"dropped_packets", value_json(q.dropped_packets)}});
  j["pfc_rx"] = nlohmann::json::array();
  j["pfc_tx"] = nlohmann::json::array();
  for (std::size_t q = 0; q < 8; ++q) {
    j["pfc_rx"].push_back(value_json(p.pfc_rx[q]));
    j["pfc_tx"].push_back(value_json(p.pfc_tx[q]));
  }
  return j;
}

}  // namespace

nlohmann::json to_json(const PortCounters& p) {
  nlohmann::json j = common_json(p);
  j["name"] = p.name;
  j["descr"] = p.descr;
  j["in_ucast_pkts"] = value_json(p.in_ucast);
  j["out_ucast_pkts"] = value_json(p.out_ucast);
  return j;
}

nlohmann::json to_json(const PortDelta& p) {
  nlohmann::json j = common_json(p);
  j["port"] = p.name.empty() ? p.descr : p.name;
  j["in_packets"] = value_json(p.in_packets);
  j["out_packets"] = value_json(p.out_packets);
  if (!p.notes.empty()) j["notes"] = p.notes;
  return j;
}

}  // namespace rocehil::switches
