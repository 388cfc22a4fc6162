#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace rocehil::inventory::detail {

// A user's value as it may appear in a message: at most `limit` characters, control characters
// escaped and other bytes outside ASCII as '?', so every message stays one printable line.
std::string shown(std::string_view value, std::size_t limit = 40);

}  // namespace rocehil::inventory::detail
