#include "cases/case_events.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace rocehil::run::case_traffic {

nlohmann::json device_events_json(std::vector<HostEvent> events) {
  std::stable_sort(events.begin(), events.end(), [](const HostEvent& a, const HostEvent& b) {
    return a.event.at_ns < b.event.at_ns;
  });
  nlohmann::json out = nlohmann::json::array();
  for (const HostEvent& e : events)
    out.push_back({{"host", e.host},
                   {"device", e.event.device},
                   {"at_ns", e.event.at_ns},
                   {"kind", e.event.kind},
                   {"detail", e.event.detail}});
  return out;
}

const HostEvent* first_port_down(const std::vector<HostEvent>& events) {
  const HostEvent* first = nullptr;
  for (const HostEvent& e : events)
    if ((e.event.kind == "port_error" || e.event.kind == "device_fatal") &&
        (first == nullptr || e.event.at_ns < first->event.at_ns))
      first = &e;
  return first;
}

void blame_port_down(reports::AttemptError& failure, const std::vector<HostEvent>& events) {
  const HostEvent* down = first_port_down(events);
  if (down == nullptr) return;
  failure.host = down->host;
  // A port of this host went down under the traffic: the transport's retries ran out because of
  // it, and the host is what to look at (its cable, its NIC), not the fabric's forwarding.
  failure.fault = reports::Fault::infrastructure;
  failure.message +=
      fmt::format(" (host {}: {} reported {} at {} ns: {})", down->host, down->event.device,
                  down->event.kind, down->event.at_ns, down->event.detail);
}

}  // namespace rocehil::run::case_traffic
