#pragma once

// The report's list of flows, built from the analyzer's tables once, at the end.

#include <span>
#include <vector>

#include "analysis/flow_tables.hpp"
#include "rocehil/capture/analysis.hpp"

namespace rocehil::capture {

// Every flow of the tables (one per family, or a folded analyzer's shards), in report order:
// descending bytes, then ascending source, destination and QP, so that equal flows always list
// the same way.
std::vector<Flow> flows_in_order(std::span<const FlowTables<V4Key>> v4,
                                 std::span<const FlowTables<V6Key>> v6);

}  // namespace rocehil::capture
