#pragma once

#include <nlohmann/json.hpp>
#include <vector>

#include "cases/case_traffic.hpp"

namespace rocehil::run::case_traffic {

// The events as run.json lists them in an attempt's raw "device_events": host, device (the RDMA
// device, or a soft host's netdev), at_ns (wall clock), kind, detail; oldest first.
nlohmann::json device_events_json(std::vector<HostEvent> events);

// The first event that takes a port or the device away (port_error, device_fatal); null if none.
const HostEvent* first_port_down(const std::vector<HostEvent>& events);

// A case that failed while a port went down: the host whose port it was is to blame, and the
// message says what its device reported and when.
void blame_port_down(reports::AttemptError& failure, const std::vector<HostEvent>& events);

}  // namespace rocehil::run::case_traffic
