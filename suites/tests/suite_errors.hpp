#pragma once

// The problems a suite's text is refused with, as "FILE:LINE:COL: message" lines: what the suite
// tests compare with.

#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

#include "rocehil/suites/suite.hpp"

namespace rocehil::suites::testing {

inline std::vector<std::string> errors_of(std::string_view text) {
  const SuiteLoadResult r = parse_suite(text, "s.yaml");
  EXPECT_FALSE(r.suite.has_value());
  std::vector<std::string> out;
  for (const auto& d : r.diagnostics) out.push_back(inventory::to_string(d));
  return out;
}

}  // namespace rocehil::suites::testing
