#pragma once

// Test helper: whether a generated file holds a line, whole.

#include <string>

namespace rocehil::testbed::testing {

inline bool has_line(const std::string& text, const std::string& line) {
  return ("\n" + text).find("\n" + line + "\n") != std::string::npos;
}

}  // namespace rocehil::testbed::testing
