#pragma once

#include <cstddef>
#include <string_view>

namespace rocehil {

// Levenshtein distance: how many one-character edits turn a into b (for "did you mean").
std::size_t edit_distance(std::string_view a, std::string_view b);

}  // namespace rocehil
