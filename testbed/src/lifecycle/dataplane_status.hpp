#pragma once

#include <string>

#include "rocehil/testbed/testbed.hpp"

namespace rocehil::testbed {

// A lossless switch's counters for `testbed status`, from the file at `counters_file`: its ports,
// or, when it cannot be read (missing: the forwarding process never started; damaged; another
// rocehil's layout), no ports and the reason. Never throws.
DataplaneStatus read_dataplane_status(const std::string& counters_file);

}  // namespace rocehil::testbed
