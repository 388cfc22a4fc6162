#pragma once

#include <nlohmann/json.hpp>

#include "rocehil/inventory/inventory.hpp"

namespace rocehil::inventory {

// The inventory as JSON, for `inventory show --json` and for the snapshot a run attaches to its
// results. Fields that are unset (-1, 0, empty) are left out.
nlohmann::json to_json(const SnmpSettings& snmp);
nlohmann::json to_json(const Host& host);
nlohmann::json to_json(const CapturePoint& capture);
nlohmann::json to_json(const Inventory& inventory);

}  // namespace rocehil::inventory
