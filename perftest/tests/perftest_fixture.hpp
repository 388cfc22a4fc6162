#pragma once

// A fixture of tests/data (real perftest outputs; SOURCES.md says where each came from), read
// whole. ROCEHIL_PERFTEST_DATA is that folder, given by each test target that reads them.

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

namespace rocehil::perftest::testing {

inline std::string fixture(const std::string& name) {
  std::ifstream in(std::string(ROCEHIL_PERFTEST_DATA) + "/" + name, std::ios::binary);
  EXPECT_TRUE(in) << name;
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace rocehil::perftest::testing
