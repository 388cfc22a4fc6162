// The preflight report as JSON (schema_version 1): `inventory check --json` and run.json's
// preflight section.
#include <cmath>
#include <nlohmann/json.hpp>

#include "rocehil/preflight/preflight.hpp"

namespace rocehil::preflight {

nlohmann::json to_json(const CheckReport& r) {
  nlohmann::json j{{"schema_version", 1},
                   {"inventory", r.inventory_file},
                   {"name", r.inventory_name},
                   {"selection", r.selection},
                   {"controller_version", r.controller_version}};
  nlohmann::json summary{{"ok", 0}, {"soft_only", 0}, {"failed", 0}, {"unreachable", 0}};
  j["hosts"] = nlohmann::json::array();
  for (const auto& h : r.hosts) {
    switch (h.verdict) {
      case HostVerdict::ok: summary["ok"] = summary["ok"].get<int>() + 1; break;
      case HostVerdict::soft_only:
        summary["soft_only"] = summary["soft_only"].get<int>() + 1;
        break;
      case HostVerdict::failed: summary["failed"] = summary["failed"].get<int>() + 1; break;
      case HostVerdict::unreachable:
        summary["unreachable"] = summary["unreachable"].get<int>() + 1;
        break;
    }
    nlohmann::json hj{{"name", h.host},
                      {"address", h.address},
                      {"verdict", std::string(to_string(h.verdict))},
                      {"ssh_ms", std::round(h.ssh_ms * 10) / 10}};
    if (h.verdict == HostVerdict::unreachable) hj["unreachable"] = h.unreachable;
    hj["checks"] = nlohmann::json::array();
    for (const auto& i : h.items)
      hj["checks"].push_back(
          {{"name", i.name}, {"status", std::string(to_string(i.status))}, {"detail", i.detail}});
    hj["facts"] = h.facts ? to_json(*h.facts) : nlohmann::json(nullptr);
    j["hosts"].push_back(std::move(hj));
  }
  j["summary"] = summary;
  return j;
}

}  // namespace rocehil::preflight
