#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace rocehil::inventory {

// A value with one numeric range in brackets, such as "gpu[001-128]" or "10.0.1.[11-42]", stands
// for as many values; the first bound's width (leading zeros) sets the width of every number.
struct RangeExpansion {
  std::vector<std::string> values;  // the value itself when it has no range
  bool had_range = false;
  std::string error;  // "what is wrong; how to fix", empty when it expanded
};

// At most `limit` values; a wider range is an error, not a surprise allocation.
RangeExpansion expand_range(std::string_view pattern, std::size_t limit = 65536);

}  // namespace rocehil::inventory
