#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "rocehil/inventory/inventory.hpp"

namespace rocehil::inventory {

// One problem in an inventory file, pointing at the value that causes it.
struct Diagnostic {
  std::string file;
  int line = 0;         // 1-based; 0 when the problem has no place (an empty file)
  int column = 0;       // 1-based
  std::string message;  // "what is wrong; how to fix it"
};
// "FILE:LINE:COL: message"
std::string to_string(const Diagnostic& d);

struct LoadResult {
  std::optional<Inventory> inventory;   // set only when there are no diagnostics
  std::vector<Diagnostic> diagnostics;  // every problem found, in file order
};

// Parses and validates an inventory: the whole file is checked and every problem reported, so a
// user fixes them in one go. `file` names it in messages. Never throws for bad input.
LoadResult parse_inventory(std::string_view text, const std::string& file);

// Reads FILE and parses it; throws rocehil::Error (bad input) only when it cannot be read.
LoadResult parse_inventory_file(const std::string& file);

// Reads FILE and parses it; throws rocehil::Error (bad input) carrying every diagnostic, one per
// line, when the file cannot be read or is invalid.
Inventory load_inventory(const std::string& file);

}  // namespace rocehil::inventory
