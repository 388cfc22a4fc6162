#pragma once

// A test's `events:` (and the pfc keys it shares with `inject:`), read as load_suite reads the
// rest of a suite: every problem reported at its place, with the fix.

#include <optional>
#include <string>
#include <vector>

#include "rocehil/inventory/yaml_reader.hpp"
#include "rocehil/suites/suite.hpp"

namespace rocehil::suites::detail {

// The keys of a PFC injection that `inject:` and a pfc event share (kind, from, link, priority,
// quanta, pps, duration_s), read from `m` into `in`. False when one was refused (said to `ctx`).
bool read_pfc_keys(inventory::LoadContext& ctx, const inventory::MapReader& m,
                   const std::string& what, Injection& in);

// `events:` of the test `owner` names: each event of a known action with exactly its keys.
// What was refused is said to `ctx` and left out.
std::vector<Event> read_events(inventory::LoadContext& ctx, const YAML::Node& n,
                               const std::string& owner);

// The test's events (its `inject:` among them) against the test itself: none at or after the
// end of a workload that runs for duration_s, and nothing brought up that no earlier event took
// down.
void check_events(inventory::LoadContext& ctx, const SuiteTest& test);

}  // namespace rocehil::suites::detail
