#pragma once

// `bytes:`, a bw sender's volume per QP connection (docs/suites.md, "Volume"): read where it is
// written, then refused where the workload, engine or size cannot send exactly that much.

#include <string>

#include "rocehil/inventory/yaml_reader.hpp"
#include "rocehil/suites/suite.hpp"

namespace rocehil::suites::detail {

// The largest volume one QP connection may be asked to send.
inline constexpr std::uint64_t max_volume_bytes = std::uint64_t{1} << 40;  // 1T

// Reads `bytes` from `m` into `s` (`what` names it: "test 'x': bytes"). A map that writes
// duration_s and not bytes runs by time, whatever the defaults said; one that writes both is
// refused.
void read_bytes(inventory::LoadContext& ctx, const inventory::MapReader& m, const std::string& what,
                TestSettings& s);

// What the test's (or part's) workload, engine and sizes cannot send of its volume. A volume
// that came from `defaults:` is dropped for a workload that does not take it (defaults serve
// every workload), refused only where the test or part writes it.
void check_volume(inventory::LoadContext& ctx, const inventory::MapReader& m,
                  const std::string& owner, SuiteTest& t);

}  // namespace rocehil::suites::detail
