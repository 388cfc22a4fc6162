#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

namespace rocehil::reports {

// Reading JSON that may have been edited by hand or come from an older rocehil (run.json, the
// preflight snapshot): a member that is missing or of another type reads as nothing, never as
// an exception in the middle of a report.

inline const nlohmann::json& null_json() {
  static const nlohmann::json none;
  return none;
}

inline const nlohmann::json& member(const nlohmann::json& j, std::string_view key) {
  if (!j.is_object()) return null_json();
  const auto it = j.find(key);
  return it == j.end() ? null_json() : *it;
}

// The member when it is an array; otherwise an empty one, so range-for reads nothing.
inline const nlohmann::json& list(const nlohmann::json& j, std::string_view key) {
  static const nlohmann::json empty = nlohmann::json::array();
  const nlohmann::json& m = member(j, key);
  return m.is_array() ? m : empty;
}

inline std::string text(const nlohmann::json& j, std::string_view key) {
  const nlohmann::json& m = member(j, key);
  return m.is_string() ? m.get<std::string>() : std::string();
}

inline std::optional<double> number(const nlohmann::json& j, std::string_view key) {
  const nlohmann::json& m = member(j, key);
  if (!m.is_number()) return std::nullopt;
  return m.get<double>();
}

}  // namespace rocehil::reports
