#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "rocehil/capture/file_source.hpp"

namespace rocehil::capture::testing {

// Names a test instantiated per FileFormat: "pcap_us", "pcap_ns", "pcapng" (gtest allows no '-').
inline std::string format_param_name(const ::testing::TestParamInfo<FileFormat>& info) {
  std::string name = to_string(info.param);
  std::replace(name.begin(), name.end(), '-', '_');
  return name;
}

}  // namespace rocehil::capture::testing
