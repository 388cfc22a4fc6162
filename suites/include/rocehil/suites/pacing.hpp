#pragma once

#include <optional>
#include <string>

#include "rocehil/suites/suite.hpp"

namespace rocehil::suites {

// Why `test`'s workload cannot be paced with `rate:` (docs/suites.md, "Pacing"), or nothing when
// it can: bw, by either engine, paces its sender; iperf3 takes the rate as its -b.
std::optional<std::string> why_rate_is_refused(const SuiteTest& test);

}  // namespace rocehil::suites
