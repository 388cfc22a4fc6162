#pragma once

// Reading back a run record (run.json) that may lack any part: a missing member reads as an
// empty object, without copying the one that is there.

#include <nlohmann/json.hpp>

namespace rocehil::run {

inline const nlohmann::json& json_member(const nlohmann::json& parent, const char* key) {
  static const nlohmann::json empty = nlohmann::json::object();
  return parent.is_object() && parent.contains(key) ? parent[key] : empty;
}

}  // namespace rocehil::run
