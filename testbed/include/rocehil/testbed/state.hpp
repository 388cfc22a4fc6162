#pragma once

#include <optional>
#include <string>

#include "rocehil/testbed/options.hpp"

namespace rocehil::testbed {

// DIR/testbed.json: what `up` was asked for, written before anything is created, so `down` and
// `status` know the testbed even after a half-finished `up`.
struct TestbedState {
  TestbedOptions options;  // options.dir is the directory's absolute path
  int mgmt_octet = 0;      // the management network is 198.19.<mgmt_octet>.0/23
  std::string phase;       // "building" while `up` runs, "up" when it finished
};

void write_state(const std::string& path, const TestbedState& state);

// nullopt when the file does not exist; throws rocehil::Error (bad input) naming the file and
// the field when it cannot be read.
std::optional<TestbedState> read_state(const std::string& path);

}  // namespace rocehil::testbed
