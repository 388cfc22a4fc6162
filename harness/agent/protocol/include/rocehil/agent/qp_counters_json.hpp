#pragma once

// QP counters as JSON objects (the agent protocol's results, collective --json, run.json): the
// fields the provider measured, and no others. An absent field is a counter the provider cannot
// see; writing it as 0 would report a measurement that was never made.

#include <nlohmann/json.hpp>
#include <string>

#include "rocehil/traffic/provider.hpp"

namespace rocehil::agent {

inline nlohmann::ordered_json qp_counters_json(const traffic::QpCounters& c) {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  for (int i = 0; i < traffic::qp_counter_kinds; ++i) {
    const auto counter = static_cast<traffic::QpCounter>(i);
    if (!c.has(counter)) continue;
    const std::string name(traffic::to_string(counter));
    if (counter == traffic::QpCounter::rate_gbps)
      j[name] = c.rate_gbps;
    else
      j[name] = c.value(counter);
  }
  return j;
}

}  // namespace rocehil::agent
