#pragma once

// Whitespace as perftest's outputs have it, for the three readers of its text (the table, the
// --out_json file, the error lines): one definition, so they trim alike.

#include <string_view>

namespace rocehil::perftest {

// Within a line: space, tab, CR (a log copied from Windows), vertical tab, form feed.
inline bool is_blank(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

inline bool is_space(char c) {
  return is_blank(c) || c == '\n';
}

inline std::string_view trim(std::string_view s) {
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

}  // namespace rocehil::perftest
