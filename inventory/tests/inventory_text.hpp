#pragma once

// Inventories parsed from text in tests: one that must load (its diagnostics fail the test), or
// the one-line diagnostics of one that must not.

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "rocehil/inventory/load.hpp"

namespace rocehil::inventory::testing {

inline Inventory load_ok(const std::string& text) {
  LoadResult r = parse_inventory(text, "f.yaml");
  for (const auto& d : r.diagnostics) ADD_FAILURE() << to_string(d);
  if (!r.inventory) throw std::runtime_error("did not load");
  return std::move(*r.inventory);
}

inline std::vector<std::string> messages(const std::string& text) {
  std::vector<std::string> out;
  for (const auto& d : parse_inventory(text, "f.yaml").diagnostics) out.push_back(to_string(d));
  return out;
}

}  // namespace rocehil::inventory::testing
