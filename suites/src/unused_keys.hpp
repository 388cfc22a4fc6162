#pragma once

// Keys a test (or a part) writes that its workload would not use: refused at the key, with why,
// rather than accepted and silently ignored. Only keys written in the test or part itself count:
// `defaults:` serve every workload of the suite. iperf3's own list is in iperf3_test.hpp.

#include <string>

#include "rocehil/inventory/yaml_reader.hpp"
#include "rocehil/suites/suite.hpp"

namespace rocehil::suites::detail {

// Also decides, for a collective, whether it runs by duration (TestSettings::
// collective_by_duration): `m` is the test's or the part's keys, `outer` the test's for a part.
void check_keys_used(inventory::LoadContext& ctx, const inventory::MapReader& m,
                     const inventory::MapReader* outer, const std::string& owner, SuiteTest& t);

}  // namespace rocehil::suites::detail
